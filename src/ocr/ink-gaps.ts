// Blank column runs in a rectified text strip. CTC peaks are too coarse (one per 8 columns) to tell a word
// space from a wide letter, but the pixels are not: a run of columns with no ink, wide relative to the
// text's height, is a space between words even where the recogniser dropped it.
import type { RgbImage } from '../media/rgb-image.js';

export interface StripInk {
  /** [start, end) column runs with no ink, as fractions of the strip width. */
  blanks: [number, number][];
  /** Height of the inked rows, in strip pixels. */
  inkHeight: number;
}

export function stripInk(strip: RgbImage): StripInk {
  const { width, height, data } = strip;
  const gray = new Uint8Array(width * height);
  const histogram = new Uint32Array(256);
  for (let i = 0; i < width * height; i++) {
    const g = Math.round(0.299 * data[i * 3] + 0.587 * data[i * 3 + 1] + 0.114 * data[i * 3 + 2]);
    gray[i] = g;
    histogram[g]++;
  }
  // Background is the median level (text covers well under half of a strip); ink is far from it.
  let bg = 0;
  for (let seen = 0; bg < 255 && seen + histogram[bg] <= gray.length / 2; bg++) seen += histogram[bg];
  let contrast = 0;
  for (let i = 0; i < gray.length; i++) contrast = Math.max(contrast, Math.abs(gray[i] - bg));
  const limit = Math.max(24, 0.4 * contrast);
  const colInk = new Uint16Array(width);
  const rowInk = new Uint16Array(height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (Math.abs(gray[y * width + x] - bg) > limit) {
        colInk[x]++;
        rowInk[y]++;
      }
    }
  }
  // Rows holding a little ink (a neighbour line's descenders) do not count towards the text height.
  const rowMin = Math.max(1, 0.02 * width);
  let top = -1,
    bottom = -1;
  for (let y = 0; y < height; y++) {
    if (rowInk[y] >= rowMin) {
      if (top < 0) top = y;
      bottom = y;
    }
  }
  const blanks: [number, number][] = [];
  let start = -1;
  for (let x = 0; x <= width; x++) {
    const blank = x < width && colInk[x] === 0;
    if (blank && start < 0) start = x;
    if (!blank && start >= 0) {
      blanks.push([start / width, x / width]);
      start = -1;
    }
  }
  return { blanks, inkHeight: top < 0 ? 0 : bottom - top + 1 };
}
