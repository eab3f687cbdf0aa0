// What a JPEG's header says, read from its markers before the first scan: size, components, EXIF
// orientation and whether an ICC profile is the standard sRGB one. Why not sharp's metadata(): on a loaded
// server that call cost the main thread and the libuv pool a measurable share of a detect request's CPU
// (its options object crosses into native code whole) for four facts (docs/capacity.md, "JPEG decoding"). Anything this
// reader is not sure of (a process other than baseline, extended or progressive Huffman, a second frame
// header, EXIF or ICC data it cannot follow, a marker out of place) returns null and the caller asks sharp,
// so its answers are sharp's or none.

export interface JpegHeader {
  width: number;
  height: number;
  /** 1 (grey), 3 (YCbCr or RGB) or 4 (CMYK, YCCK). */
  components: 1 | 3 | 4;
  /** EXIF orientation of IFD0 (1 when there is none). */
  orientation: number;
  /** 'none' without an ICC profile; 'srgb' for the standard sRGB IEC61966-2.1 one; 'other' for any other. */
  icc: 'none' | 'srgb' | 'other';
}

const SOI = 0xd8,
  SOS = 0xda,
  APP1 = 0xe1,
  APP2 = 0xe2;
/** Frame headers libjpeg-turbo decodes as sharp would: baseline, extended sequential and progressive Huffman. */
const HUFFMAN_FRAMES = new Set([0xc0, 0xc1, 0xc2]);
/** Every other start-of-frame marker (lossless, hierarchical, arithmetic): left to sharp. */
const OTHER_FRAMES = new Set([0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
const EXIF = Buffer.from('Exif\0\0', 'latin1');
const ICC = Buffer.from('ICC_PROFILE\0', 'latin1');

/** The header of a JPEG (bytes from its first byte), or null where sharp should be asked instead. */
export function readJpegHeader(bytes: Uint8Array): JpegHeader | null {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 4 || b[0] !== 0xff || b[1] !== SOI) return null;
  let frame: { width: number; height: number; components: number } | null = null;
  let orientation: number | null = null;
  let exifSegments = 0;
  let icc: JpegHeader['icc'] | null = null;
  let iccChunks = 0;
  let i = 2;
  for (;;) {
    if (i + 4 > b.length || b[i] !== 0xff) return null;
    while (b[i + 1] === 0xff && i + 5 <= b.length) i++; // fill bytes before a marker
    const marker = b[i + 1]!;
    if (marker === SOS) break;
    // A marker without a length (RSTn, TEM, a second SOI) does not belong before the first scan.
    if (marker === SOI || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0xd9 || marker === 0x00)
      return null;
    const len = b.readUInt16BE(i + 2);
    const start = i + 4,
      end = i + 2 + len;
    if (len < 2 || end > b.length) return null;
    if (HUFFMAN_FRAMES.has(marker)) {
      if (frame || len < 8) return null;
      frame = { height: b.readUInt16BE(start + 1), width: b.readUInt16BE(start + 3), components: b[start + 5]! };
    } else if (OTHER_FRAMES.has(marker)) {
      return null;
    } else if (marker === APP1 && len >= 2 + EXIF.length && b.subarray(start, start + EXIF.length).equals(EXIF)) {
      if (++exifSegments > 1) return null;
      orientation = exifOrientation(b.subarray(start + EXIF.length, end));
      if (orientation === null) return null;
    } else if (marker === APP2 && len >= 2 + ICC.length + 2 && b.subarray(start, start + ICC.length).equals(ICC)) {
      iccChunks++;
      const seq = b[start + ICC.length]!;
      const profile = b.subarray(start + ICC.length + 2, end);
      if (seq === 1) {
        if (icc !== null || profile.length < 56) return null;
        icc = iccKind(profile);
      }
    }
    i = end;
  }
  if (!frame || frame.width === 0 || frame.height === 0) return null;
  if (frame.components !== 1 && frame.components !== 3 && frame.components !== 4) return null;
  // ICC chunks without a first one: a profile the decoder would not assemble; sharp decides.
  if (iccChunks > 0 && icc === null) return null;
  return {
    width: frame.width,
    height: frame.height,
    components: frame.components,
    orientation: orientation ?? 1,
    icc: icc ?? 'none',
  };
}

/**
 * Whether the addon decodes it exactly as sharp would: no colour management, RGB or grey; any EXIF orientation
 * (the addon turns it upright as sharp does). An embedded profile counts only when it is the standard sRGB
 * IEC61966-2.1 one, which sharp's transform leaves unchanged: identical pixels on the 19 COCO photos that carry
 * it, where Adobe RGB and Apple profiles moved pixels by up to 138 levels.
 */
export function isPlainJpeg(h: Pick<JpegHeader, 'orientation' | 'icc' | 'components'>): boolean {
  return h.orientation >= 1 && h.orientation <= 8 && h.icc !== 'other' && (h.components === 1 || h.components === 3);
}

/** A profile's kind by its header: device manufacturer "IEC " and model "sRGB" make the standard sRGB one. */
export function iccKind(profile: Uint8Array | undefined): JpegHeader['icc'] {
  if (!profile) return 'none';
  const b = Buffer.from(profile.buffer, profile.byteOffset, profile.byteLength);
  return b.length >= 56 && b.toString('latin1', 48, 52) === 'IEC ' && b.toString('latin1', 52, 56) === 'sRGB'
    ? 'srgb'
    : 'other';
}

/** IFD0's Orientation (tag 0x0112) of a TIFF structure; 1 when absent; null when the structure cannot be followed. */
function exifOrientation(tiff: Buffer): number | null {
  if (tiff.length < 8) return null;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return null;
  const le = order === 'II';
  const u16 = (o: number) => (le ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
  const u32 = (o: number) => (le ? tiff.readUInt32LE(o) : tiff.readUInt32BE(o));
  if (u16(2) !== 42) return null;
  const ifd = u32(4);
  if (ifd < 8 || ifd + 2 > tiff.length) return null;
  const count = u16(ifd);
  if (ifd + 2 + count * 12 > tiff.length) return null;
  for (let k = 0; k < count; k++) {
    const e = ifd + 2 + k * 12;
    if (u16(e) !== 0x0112) continue;
    // SHORT, one value, held in the entry itself.
    if (u16(e + 2) !== 3 || u32(e + 4) !== 1) return null;
    const v = u16(e + 8);
    return v >= 1 && v <= 8 ? v : null;
  }
  return 1;
}
