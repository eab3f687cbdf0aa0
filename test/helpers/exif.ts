// JPEGs with hand-built metadata, as cameras write them: sharp's own writer adds its sRGB profile beside any
// EXIF block it writes, so a photo whose only metadata is its orientation has to be put together by hand.

/**
 * An EXIF block (an APP1 payload) whose IFD0 holds the orientation alone, in either byte order; `type` is the
 * entry's TIFF type (3, SHORT, as cameras write it; another one tests a reader's refusal).
 */
export function exifOrientation(orientation: number, order: 'II' | 'MM' = 'II', type = 3): Buffer {
  const t = Buffer.alloc(8 + 2 + 12 + 4);
  const le = order === 'II';
  t.write(order, 0, 'latin1');
  const w16 = (v: number, o: number) => (le ? t.writeUInt16LE(v, o) : t.writeUInt16BE(v, o));
  const w32 = (v: number, o: number) => (le ? t.writeUInt32LE(v, o) : t.writeUInt32BE(v, o));
  w16(42, 2);
  w32(8, 4);
  w16(1, 8);
  w16(0x0112, 10);
  w16(type, 12);
  w32(1, 14);
  w16(orientation, 18);
  return Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), t]);
}

/** The JPEG with a segment (marker, payload) inserted after its SOI marker. */
export function insertSegment(jpeg: Buffer, marker: number, payload: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(payload.length + 2);
  return Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, marker]), len, payload, jpeg.subarray(2)]);
}

/** The JPEG with an EXIF orientation and no other metadata: a photo stored turned or mirrored. */
export function withOrientation(jpeg: Buffer, orientation: number): Buffer {
  return insertSegment(jpeg, 0xe1, exifOrientation(orientation));
}
