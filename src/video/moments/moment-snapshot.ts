// What the index step keeps of its state in a resumable task's checkpoint (docs/moments.md, "When a worker
// dies"), and the check that reads one back. Pixels never go in: each frame a kept image came from is named by
// its index and its `before` reference (StepFrame.before), listed once however many items use it, and the next
// worker decodes it again; the crops, thumbnails, colours and layout signature are recomputed from those frames
// by the same code, so they equal the first worker's. Everything else is the metadata the items will carry.
// The checkpoint carries it as {v, z}: the JSON raw-deflated in base64, as the tracker's state is (docs/moments.md,
// "When a worker dies", has the sizes): most of it is the same keys once per track and the frames' references.
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** A frame kept images come from: [its index in the stream, its `before` reference]. */
export type FrameRef = [index: number, before: unknown];

export interface SegmentState {
  shot: number;
  first: number;
  last: number;
  startMs: number;
  lastMs: number;
  wallMs?: number;
  offset: number | null;
  /** The kept frames, as positions in IndexSnapshot.frames. */
  frames: number[];
  classes: string[];
  texts: string[];
  lines: string[];
  zones: string[];
}

export interface TrackState {
  id: number;
  cls: string;
  first: number;
  startMs: number;
  lastMs: number;
  wallMs?: number;
  offset: number;
  best: number;
  /** The best crop: its frame (a position in IndexSnapshot.frames) and roi [left, top, width, height]. */
  crop: { frame: number; roi: [number, number, number, number] } | null;
  lines: string[];
  zones: string[];
}

/** A closed item not yet known to be written: the next worker writes it (again; writes are upserts by id). */
export type PendingState =
  | { kind: 'segment'; segment: SegmentState; endMs: number }
  | { kind: 'track'; track: TrackState; endMs: number };

export interface IndexSnapshot {
  v: 1;
  frames: FrameRef[];
  /** The segmenter: where its segment started and the frame whose layout it compares the next one with. */
  segmenter: { startMs: number | null; last: number | null };
  frameGapMs: number;
  lastMs: number | null;
  shot: number;
  segment: SegmentState | null;
  tracks: TrackState[];
  pending: PendingState[];
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStrs = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** What the checkpoint holds of the index step. */
export interface PackedIndexSnapshot {
  v: 1;
  z: string;
}

export function packIndexSnapshot(s: IndexSnapshot): PackedIndexSnapshot {
  return { v: 1, z: deflateRawSync(JSON.stringify(s)).toString('base64') };
}

const bad = (what: string): never => {
  throw new Error(`The index step's checkpoint is malformed (${what})`);
};

/** The snapshot a packIndexSnapshot() holds, unchecked (readIndexSnapshot checks it); throws an Error. */
export function unpackIndexSnapshot(p: unknown): unknown {
  const o = p as Partial<PackedIndexSnapshot> | null;
  if (!o || typeof o !== 'object' || o.v !== 1 || typeof o.z !== 'string') return bad('version');
  try {
    return JSON.parse(inflateRawSync(Buffer.from(o.z, 'base64')).toString('utf8'));
  } catch {
    return bad('not deflated JSON');
  }
}

/** A packed snapshot, checked enough that restoring it cannot throw halfway; throws an Error naming what is
 * wrong. */
export function readIndexSnapshot(packed: unknown): IndexSnapshot {
  const s = unpackIndexSnapshot(packed);
  const o = s as Partial<IndexSnapshot> | null;
  if (!o || typeof o !== 'object' || o.v !== 1) bad('version');
  const snap = o as IndexSnapshot;
  if (!Array.isArray(snap.frames) || !snap.frames.every((f) => Array.isArray(f) && f.length === 2 && isNum(f[0])))
    bad('frames');
  const frame = (i: unknown) => Number.isInteger(i) && (i as number) >= 0 && (i as number) < snap.frames.length;
  const seg = (g: SegmentState | null) => {
    if (g === null) return;
    if (!g || typeof g !== 'object') bad('segment');
    if (![g.shot, g.first, g.last, g.startMs, g.lastMs].every(isNum)) bad('segment numbers');
    if (g.offset !== null && !isNum(g.offset)) bad('segment offset');
    if (!Array.isArray(g.frames) || g.frames.length === 0 || !g.frames.every(frame)) bad('segment frames');
    if (![g.classes, g.texts, g.lines, g.zones].every(isStrs)) bad('segment labels');
  };
  const track = (t: TrackState) => {
    if (!t || typeof t !== 'object' || typeof t.cls !== 'string') bad('track');
    if (![t.id, t.first, t.startMs, t.lastMs, t.offset, t.best].every(isNum)) bad('track numbers');
    if (t.crop !== null && (!t.crop || !frame(t.crop.frame) || !Array.isArray(t.crop.roi) || !t.crop.roi.every(isNum)))
      bad('track crop');
    if (![t.lines, t.zones].every(isStrs)) bad('track rules');
  };
  const g = snap.segmenter;
  if (!g || (g.startMs !== null && !isNum(g.startMs)) || (g.last !== null && !frame(g.last))) bad('segmenter');
  if (!isNum(snap.frameGapMs) || (snap.lastMs !== null && !isNum(snap.lastMs)) || !isNum(snap.shot)) bad('times');
  if (snap.segment === undefined) bad('segment');
  seg(snap.segment);
  if (!Array.isArray(snap.tracks)) bad('tracks');
  snap.tracks.forEach(track);
  if (!Array.isArray(snap.pending)) bad('pending');
  for (const p of snap.pending) {
    if (!p || !isNum(p.endMs)) bad('pending');
    if (p.kind === 'segment') seg(p.segment ?? bad('pending segment'));
    else if (p.kind === 'track') track(p.track);
    else bad('pending kind');
  }
  return snap;
}
