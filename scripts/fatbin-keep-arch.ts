// Shrinks a CUDA library for a transfer to one known GPU: zeroes the payload of every fatbinary entry (cubin or
// PTX) in its .nv_fatbin section that is not for the given SM architecture, leaving every header in place, so
// the file compresses to a fraction of its size and still loads on that GPU (the runtime picks the entry for
// its architecture and never reads the others). For the device check only (scripts/device-bundle.sh): ONNX
// Runtime's CUDA provider, most of it kernels for six architectures, is several times the 64 MiB the link to a
// lent GPU machine carries (docs/capacity.md, "Per GPU-class accelerator"). Never for a library that ships: on
// another GPU it would find no kernel.
//   npx tsx scripts/fatbin-keep-arch.ts IN OUT [ARCH=90]
import { readFileSync, writeFileSync } from 'node:fs';

const FATBIN_MAGIC = 0xba55ed50;

/** Offset and size of a section of a 64-bit little-endian ELF file, or null. */
function elfSection(elf: Buffer, name: string): { offset: number; size: number } | null {
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1)
    throw new Error('not a 64-bit little-endian ELF file');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const shstrndx = elf.readUInt16LE(0x3e);
  const header = (i: number) => shoff + i * shentsize;
  const strOffset = Number(elf.readBigUInt64LE(header(shstrndx) + 0x18));
  for (let i = 0; i < shnum; i++) {
    const h = header(i);
    const at = strOffset + elf.readUInt32LE(h);
    const end = elf.indexOf(0, at);
    if (elf.toString('latin1', at, end) === name)
      return { offset: Number(elf.readBigUInt64LE(h + 0x18)), size: Number(elf.readBigUInt64LE(h + 0x20)) };
  }
  return null;
}

/**
 * Zeroes, in place, the entries of the fatbinary containers in [offset, offset + size) whose architecture is
 * not `arch`; returns the bytes kept and zeroed by architecture. Container: magic u32, version u16, header
 * size u16, entries' size u64. Entry: kind u16, (u16), header size u32, payload size u64, ..., architecture
 * u32 at byte 28. Anything that does not parse ends that container's walk untouched.
 */
function keepArch(buf: Buffer, offset: number, size: number, arch: number): Record<string, number> {
  const bytes: Record<string, number> = {};
  const end = offset + size;
  let p = offset;
  while (p + 16 <= end) {
    if (buf.readUInt32LE(p) !== FATBIN_MAGIC) {
      p += 8;
      continue;
    } // containers are 8-byte aligned
    const containerEnd = p + buf.readUInt16LE(p + 6) + Number(buf.readBigUInt64LE(p + 8));
    let q = p + buf.readUInt16LE(p + 6);
    while (q + 64 <= containerEnd) {
      const headerSize = buf.readUInt32LE(q + 4);
      const payload = Number(buf.readBigUInt64LE(q + 8));
      if (headerSize < 64 || headerSize > 4096 || q + headerSize + payload > containerEnd) break;
      const entryArch = buf.readUInt32LE(q + 28);
      const key = `sm_${entryArch} ${entryArch === arch ? 'kept' : 'zeroed'}`;
      bytes[key] = (bytes[key] ?? 0) + payload;
      if (entryArch !== arch) buf.fill(0, q + headerSize, q + headerSize + payload);
      q += headerSize + payload;
    }
    p = Math.max(p + 8, containerEnd);
  }
  return bytes;
}

const [input, output, archText = '90'] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: fatbin-keep-arch.ts IN OUT [ARCH=90]');
  process.exit(2);
}
const lib = readFileSync(input);
const section = elfSection(lib, '.nv_fatbin');
if (!section) {
  console.error(`${input} has no .nv_fatbin section`);
  process.exit(1);
}
const counts = keepArch(lib, section.offset, section.size, Number(archText));
writeFileSync(output, lib);
for (const [k, v] of Object.entries(counts).sort()) console.log(`${k}: ${(v / 1048576).toFixed(1)} MB`);
