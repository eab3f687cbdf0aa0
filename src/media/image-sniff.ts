// Image format from magic bytes. The Content-Type of an upload or a data URI is a claim; the bytes are the truth,
// and sharp would happily decode formats we promise not to accept (GIF, TIFF, SVG...).

export type AcceptedImageFormat = 'jpeg' | 'png' | 'webp';

export type SniffResult = { accepted: true; format: AcceptedImageFormat } | { accepted: false; name: string };

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) =>
  b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
// Past the end is '' (a view may not start beyond its ArrayBuffer: an empty upload was a RangeError, a 500).
const ascii = (b: Uint8Array, at: number, len: number) =>
  at >= b.length ? '' : Buffer.from(b.buffer, b.byteOffset + at, Math.min(len, b.length - at)).toString('latin1');

/** Names the format of `bytes`; only JPEG, PNG and WEBP are accepted, everything else is named for the error message. */
export function sniffImageFormat(bytes: Uint8Array): SniffResult {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { accepted: true, format: 'jpeg' };
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { accepted: true, format: 'png' };
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return { accepted: true, format: 'webp' };
  return { accepted: false, name: nameOtherFormat(bytes) };
}

function nameOtherFormat(b: Uint8Array): string {
  const head = ascii(b, 0, 6);
  if (head === 'GIF87a' || head === 'GIF89a') return 'gif';
  if (head.startsWith('BM')) return 'bmp';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (startsWith(b, [0x00, 0x00, 0x01, 0x00])) return 'ico';
  if (ascii(b, 4, 4) === 'ftyp') {
    const brand = ascii(b, 8, 4);
    if (brand.startsWith('avi')) return 'avif';
    if (brand.startsWith('hei') || brand.startsWith('mif') || brand === 'msf1') return 'heic';
    return 'an ISO media file (mp4/mov)';
  }
  if (startsWith(b, [0xff, 0x0a]) || ascii(b, 4, 8) === 'JXL \r\n\x87\n') return 'jxl';
  if (startsWith(b, [0x25, 0x50, 0x44, 0x46])) return 'pdf';
  const text = ascii(b, 0, 256).trimStart().toLowerCase();
  if (text.startsWith('<svg') || (text.startsWith('<?xml') && text.includes('<svg'))) return 'svg';
  if (text.startsWith('<!doctype html') || text.startsWith('<html')) return 'html';
  if (b.length === 0) return 'an empty file';
  return 'an unrecognised format';
}
