// Cameras for the GPU check's camera rows on a host with no FFmpeg and no GStreamer: an HTTP server in the
// bench's own process that answers every GET with an endless MPEG-TS response (a live source to sightflow:
// no length, no duration), an H.264 clip looped in real time. Each loop's timestamps (PTS, DTS, PCR) go on
// from the previous loop's and the continuity counters run on, so the stream is what a camera sends for as
// long as it runs: no jump back at the loop for the demuxer, the sampler or the tracker to see. Frames leave
// at their times: the clip is cut into units at each video frame's first packet, and a unit is written once
// the connection's clock reaches its DTS (so the decoder sees frames arrive as from a camera, not in bursts).
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const PACKET = 188;
const CLOCK = 90_000;

interface Unit {
  /** Where the unit's packets start and end in the clip. */
  start: number;
  end: number;
  /** The unit's video DTS (else PTS), 90 kHz, from the clip's first. */
  at: number;
}

interface Clip {
  bytes: Buffer;
  units: Unit[];
  /** One loop's length in 90 kHz ticks: the last frame's time plus one frame. */
  period: number;
  frames: number;
}

/** The 33-bit timestamp of a PES header's 5 bytes at `o`. */
const readTs = (b: Buffer, o: number) =>
  ((b[o]! >> 1) & 0x07) * 2 ** 30 +
  ((b[o + 1]! << 7) | (b[o + 2]! >> 1)) * 2 ** 15 +
  ((b[o + 3]! << 7) | (b[o + 4]! >> 1));

function writeTs(b: Buffer, o: number, v: number): void {
  const x = v % 2 ** 33;
  const hi = Math.floor(x / 2 ** 30);
  const mid = Math.floor(x / 2 ** 15) & 0x7fff;
  const lo = x & 0x7fff;
  b[o] = (b[o]! & 0xf1) | (hi << 1) | 1;
  b[o + 1] = mid >> 7;
  b[o + 2] = ((mid & 0x7f) << 1) | 1;
  b[o + 3] = lo >> 7;
  b[o + 4] = ((lo & 0x7f) << 1) | 1;
}

/** Where a packet's payload starts (after its adaptation field), or -1 when it has none. */
function payloadAt(b: Buffer, p: number): number {
  const afc = (b[p + 3]! >> 4) & 3;
  if (!(afc & 1)) return -1;
  return p + 4 + (afc & 2 ? 1 + b[p + 4]! : 0);
}

/** A PES header's timestamps in the packet at p: [PTS offset, DTS offset or -1], or null without one. */
function pesTimes(b: Buffer, p: number): [number, number] | null {
  if (!(b[p + 1]! & 0x40)) return null;
  const o = payloadAt(b, p);
  if (o < 0 || o + 14 > p + PACKET || b[o] !== 0 || b[o + 1] !== 0 || b[o + 2] !== 1) return null;
  const flags = (b[o + 7]! >> 6) & 3;
  if (!(flags & 2)) return null;
  return [o + 9, flags === 3 ? o + 14 : -1];
}

/** Reads an MPEG-TS clip of one H.264 stream (no B-frames) into its frame units. */
export function loadClip(file: string): Clip {
  const bytes = readFileSync(file);
  if (bytes.length % PACKET !== 0 || bytes[0] !== 0x47) throw new Error(`${file} is not an MPEG-TS file`);
  const starts: Array<{ at: number; p: number }> = [];
  for (let p = 0; p < bytes.length; p += PACKET) {
    const stream = payloadAt(bytes, p);
    const t = pesTimes(bytes, p);
    // Video PES: stream id 0xE0-0xEF.
    if (t && (bytes[stream + 3]! & 0xf0) === 0xe0) starts.push({ at: readTs(bytes, t[1] >= 0 ? t[1] : t[0]), p });
  }
  if (starts.length < 2) throw new Error(`${file} has fewer than two video frames`);
  const first = starts[0]!.at;
  const units = starts.map((s, i) => ({
    start: i === 0 ? 0 : s.p,
    end: i + 1 < starts.length ? starts[i + 1]!.p : bytes.length,
    at: s.at - first,
  }));
  const last = units[units.length - 1]!.at;
  return { bytes, units, period: last + Math.round(last / (units.length - 1)), frames: units.length };
}

/** One loop's bytes with every timestamp moved on by `shift` ticks and the continuity counters run on. */
function shifted(clip: Clip, unit: Unit, shift: number, cc: Map<number, number>): Buffer {
  const b = Buffer.from(clip.bytes.subarray(unit.start, unit.end));
  for (let p = 0; p < b.length; p += PACKET) {
    const pid = ((b[p + 1]! & 0x1f) << 8) | b[p + 2]!;
    const afc = (b[p + 3]! >> 4) & 3;
    if (afc & 1) {
      const n = ((cc.get(pid) ?? -1) + 1) & 0x0f;
      cc.set(pid, n);
      b[p + 3] = (b[p + 3]! & 0xf0) | n;
    }
    if (shift === 0) continue;
    // The PCR (33-bit base at 90 kHz, then 6 reserved bits and a 9-bit extension) in the adaptation field.
    if (afc & 2 && b[p + 4]! >= 7 && b[p + 5]! & 0x10) {
      const o = p + 6;
      const base = b[o]! * 2 ** 25 + (b[o + 1]! << 17) + (b[o + 2]! << 9) + (b[o + 3]! << 1) + (b[o + 4]! >> 7);
      const v = (base + shift) % 2 ** 33;
      b[o] = Math.floor(v / 2 ** 25) & 0xff;
      b[o + 1] = Math.floor(v / 2 ** 17) & 0xff;
      b[o + 2] = Math.floor(v / 2 ** 9) & 0xff;
      b[o + 3] = Math.floor(v / 2) & 0xff;
      b[o + 4] = (b[o + 4]! & 0x7f) | ((v & 1) << 7);
    }
    const t = pesTimes(b, p);
    if (t) {
      writeTs(b, t[0], readTs(b, t[0]) + shift);
      if (t[1] >= 0) writeTs(b, t[1], readTs(b, t[1]) + shift);
    }
  }
  return b;
}

interface Viewer {
  res: ServerResponse;
  t0: number;
  /** The next unit to send, counting over all loops. */
  next: number;
  cc: Map<number, number>;
}

export interface TsCameras {
  /** The URL of camera i (every path serves the same clip; the path keeps the cameras apart in logs). */
  url(i: number): string;
  /** Frames a second the clip runs at, and its frames per loop. */
  fps: number;
  frames: number;
  /** Connections open now. */
  viewers(): number;
  close(): Promise<void>;
}

/** Serves `file` (MPEG-TS, H.264 without B-frames) to every GET as an endless real-time stream. */
export async function startTsCameras(file: string): Promise<TsCameras> {
  const clip = loadClip(file);
  const viewers = new Set<Viewer>();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'video/mp2t', 'Cache-Control': 'no-store' });
    const v: Viewer = { res, t0: performance.now(), next: 0, cc: new Map() };
    viewers.add(v);
    res.on('close', () => viewers.delete(v));
    pump(v);
  });
  const ms = (ticks: number) => (ticks * 1000) / CLOCK;
  /** Writes every unit whose time has come. */
  function pump(v: Viewer): void {
    const now = performance.now() - v.t0;
    for (;;) {
      const loop = Math.floor(v.next / clip.frames);
      const unit = clip.units[v.next % clip.frames]!;
      const at = loop * clip.period + unit.at;
      if (ms(at) > now) break;
      v.res.write(shifted(clip, unit, loop * clip.period, v.cc));
      v.next++;
    }
  }
  // One clock for every connection: a tick much shorter than a frame writes what is due.
  const tick = setInterval(() => {
    for (const v of viewers) pump(v);
  }, 5);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (i) => `http://127.0.0.1:${port}/camera-${i}.ts`,
    fps: CLOCK / (clip.period / clip.frames),
    frames: clip.frames,
    viewers: () => viewers.size,
    close: async () => {
      clearInterval(tick);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
