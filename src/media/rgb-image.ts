// The one decoded-pixels type every part passes around (image input, detection, OCR, video frames, embedders),
// so pixels move between them without copies or adapters.

/** Packed RGB24 pixels: 3 bytes per pixel, row-major, rows back to back (no padding). A Buffer is a Uint8Array. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3;
}
