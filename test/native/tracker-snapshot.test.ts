// Tracker snapshots through the real addon: a tracker restored from a snapshot (taken at any frame) answers the
// rest of a scene exactly as the original did, for SORT, ByteTrack and the crowd options, with string classes
// and colour signatures; bad snapshots are refused with the tracker unchanged; and TargetTracker's snapshot
// survives JSON and restores into a fresh TargetTracker (with its TrackIds) that assigns the same ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { Tracker, type TrackerDetection, type TrackerOptions } from '../../src/native/track.js';
import {
  CROWD,
  TargetTracker,
  TrackIds,
  TRACKER_DEFAULTS,
  type Candidate,
  type TrackerSettings,
  type TrackerSnapshot,
  type TrackIdsSnapshot,
} from '../../src/video/pipeline/target-tracker.js';
import { colourSignature, SIGNATURE_DIM } from '../../src/media/colour-signature.js';
import type { RgbImage } from '../../src/media/rgb-image.js';

const W = 640,
  H = 360;

/** A deterministic pseudo-random sequence (an LCG), so every run sees the same scene. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Walker {
  birth: number;
  death: number;
  x0: number;
  y0: number;
  vx: number;
  vy: number;
  w: number;
  h: number;
  top: [number, number, number];
  legs: [number, number, number];
  cls: string;
}

/** People walking across each other, born and leaving at their own frames, of two classes. */
function walkers(n: number, frames: number): Walker[] {
  const r = lcg(7);
  const colour = (): [number, number, number] => [Math.floor(r() * 256), Math.floor(r() * 256), Math.floor(r() * 256)];
  return Array.from({ length: n }, (_, i) => {
    const birth = Math.floor(r() * frames * 0.5);
    return {
      birth,
      death: birth + 20 + Math.floor(r() * frames),
      x0: r() * (W - 60),
      y0: 20 + r() * (H - 140),
      vx: (r() - 0.5) * 10,
      vy: (r() - 0.5) * 2,
      w: 30 + r() * 20,
      h: 80 + r() * 30,
      top: colour(),
      legs: colour(),
      cls: i % 7 === 6 ? 'bicycle' : 'person',
    };
  });
}

/** Frame f drawn: a noisy background and each walker as a coloured upper body over coloured legs. */
function render(people: Walker[], f: number): { image: RgbImage; boxes: Array<{ w: Walker; box: number[] }> } {
  const data = new Uint8Array(W * H * 3);
  const r = lcg(1000 + f);
  for (let i = 0; i < data.length; i++) data[i] = 90 + Math.floor(r() * 40);
  const boxes: Array<{ w: Walker; box: number[] }> = [];
  for (const p of people) {
    if (f < p.birth || f >= p.death) continue;
    const t = f - p.birth;
    const x1 = Math.max(0, Math.min(W - p.w - 1, p.x0 + p.vx * t));
    const y1 = Math.max(0, Math.min(H - p.h - 1, p.y0 + p.vy * t));
    const box = [x1, y1, x1 + p.w, y1 + p.h];
    for (let y = Math.floor(y1); y < Math.floor(y1 + p.h); y++)
      for (let x = Math.floor(x1); x < Math.floor(x1 + p.w); x++) {
        const c = y < y1 + p.h / 2 ? p.top : p.legs;
        data.set(c, (y * W + x) * 3);
      }
    boxes.push({ w: p, box });
  }
  return { image: { data, width: W, height: H, channels: 3 }, boxes };
}

/** The scene's detections per frame: some hidden, scores varying (some low for ByteTrack), real signatures. */
function scene(frames: number, n: number): Array<Candidate[]> {
  const people = walkers(n, frames);
  const r = lcg(3);
  const out: Array<Candidate[]> = [];
  for (let f = 0; f < frames; f++) {
    const { image, boxes } = render(people, f);
    const dets: Candidate[] = [];
    for (const { w, box } of boxes) {
      if (r() < 0.08) continue; // missed by the detector this frame
      const signature = new Float32Array(SIGNATURE_DIM);
      colourSignature(image, box, signature);
      const score = r() < 0.15 ? 0.2 + r() * 0.3 : 0.55 + r() * 0.4;
      dets.push({ box: box as unknown as Candidate['box'], score, cls: w.cls, signature });
    }
    out.push(dets);
  }
  return out;
}

const FRAMES = 60;
const SCENE = scene(FRAMES, 16);
/** Frame indices as a sampled file gives them: every 3rd source frame, with two stretches skipped. */
const INDEX = Array.from({ length: FRAMES }, (_, f) => 3 * f + (f >= 20 ? 6 : 0) + (f >= 41 ? 9 : 0));

const CONFIGS: Array<[string, TrackerOptions]> = [
  ['sort', { minHits: 3 }],
  ['bytetrack', { report: 'all', byteTrack: { highThresh: 0.5, lowThresh: 0.1 } }],
  ['crowd', { report: 'all', minHits: 2, buffered: CROWD.buffered, appearance: CROWD.appearance }],
];

function feed(frame: Candidate[]): TrackerDetection[] {
  return frame.map((c) => ({ box: c.box, score: c.score, class: c.cls, signature: c.signature }));
}

for (const [name, options] of CONFIGS) {
  test(`${name}: a tracker restored at any frame answers the rest of the scene exactly as the original`, () => {
    const original = new Tracker(options);
    const answers: string[] = [];
    const snapshots: Uint8Array[] = [];
    for (let f = 0; f < FRAMES; f++) {
      answers.push(JSON.stringify(original.update(feed(SCENE[f]), f === 30 ? 2 : 1)));
      snapshots.push(original.snapshot());
    }
    assert.ok(
      answers.some((a) => a !== '[]'),
      'the scene reports tracks',
    );
    for (let k = 0; k < FRAMES - 1; k += 4) {
      const restored = new Tracker(options);
      restored.restore(snapshots[k]);
      assert.equal(restored.frames, k + 1);
      assert.deepEqual(restored.snapshot(), snapshots[k]);
      for (let f = k + 1; f < FRAMES; f++) {
        assert.equal(
          JSON.stringify(restored.update(feed(SCENE[f]), f === 30 ? 2 : 1)),
          answers[f],
          `from ${k}, frame ${f}`,
        );
        assert.deepEqual(restored.snapshot(), snapshots[f], `state from ${k}, frame ${f}`);
      }
    }
  });
}

test('the class numbers travel with the snapshot: a fresh wrapper numbers the classes as the original did', () => {
  const a = new Tracker({ minHits: 1 });
  a.update([{ box: [0, 0, 40, 100], class: 'car' }]);
  a.update([
    { box: [1, 0, 41, 100], class: 'car' },
    { box: [300, 0, 340, 100], class: 'person' },
  ]);
  const b = new Tracker({ minHits: 1 });
  b.restore(a.snapshot());
  // Seen first in the other order, 'person' would take class number 1 and match the car's track.
  const next = [
    { box: [302, 0, 342, 100], class: 'person' },
    { box: [2, 0, 42, 100], class: 'car' },
  ];
  assert.deepEqual(b.update(next), a.update(next));
});

test('bad snapshots are refused with a clear error and the tracker unchanged', () => {
  const options = CONFIGS[2][1];
  const source = new Tracker(options);
  for (let f = 0; f < 20; f++) source.update(feed(SCENE[f]));
  const good = source.snapshot();
  const t = new Tracker(options);
  for (let f = 0; f < 8; f++) t.update(feed(SCENE[f]));
  const before = t.snapshot();
  const refused = (bytes: Uint8Array, why: RegExp) => {
    assert.throws(
      () => t.restore(bytes),
      (e: Error & { code?: string }) => e.code === 'ERR_SIGHTFLOW_TRACK_SNAPSHOT_REFUSED' && why.test(e.message),
    );
    assert.deepEqual(t.snapshot(), before);
  };
  for (const len of [0, 3, 5, 20, good.length - 1]) refused(good.subarray(0, len), /too short|truncated|malformed/);
  const other = good.slice();
  other[0] = 2;
  refused(other, /format version 2/);
  const headerLength = new DataView(good.buffer, good.byteOffset).getUint32(1, true);
  const nativeVersion = good.slice();
  nativeVersion[5 + headerLength + 4] = 1; // the native format's version 1 (signatures as floats), now refused
  refused(nativeVersion, /another format version/);
  nativeVersion[5 + headerLength + 4] = 3;
  refused(nativeVersion, /another format version/);
  const badJson = good.slice();
  badJson[5] = 0x7b + 1;
  refused(badJson, /not JSON/);
  refused(new Tracker({ ...options, maxAge: 31 }).snapshot(), /other options/);
  refused(new Tracker({ ...options, appearance: { dim: SIGNATURE_DIM, weight: 0.5 } }).snapshot(), /other options/);
  assert.throws(() => new Tracker(options).restore(new Tracker().snapshot()), /other options/);
  assert.throws(() => t.restore('bytes' as unknown as Uint8Array), TypeError);
  // And the good one goes in.
  t.restore(good);
  assert.deepEqual(t.snapshot(), good);
});

const SETTINGS: Array<[string, TrackerSettings]> = [
  ['sort', TRACKER_DEFAULTS],
  ['bytetrack', { ...TRACKER_DEFAULTS, type: 'bytetrack' }],
];

for (const [name, settings] of SETTINGS) {
  test(`TargetTracker (${name}): snapshot -> JSON -> restore into a fresh one assigns the same ids from then on`, () => {
    const ids = new TrackIds();
    const original = new TargetTracker(settings, 0, ids, 0.5);
    const answers: string[] = [];
    const checkpoints: string[] = [];
    for (let f = 0; f < FRAMES; f++) {
      const out = original.assign(SCENE[f], INDEX[f]);
      answers.push(JSON.stringify(out.map((o) => [SCENE[f].indexOf(o.candidate), o.trackId])));
      checkpoints.push(JSON.stringify({ tracker: original.snapshot(), ids: ids.snapshot() }));
    }
    assert.ok(new Set(answers.flatMap((a) => JSON.parse(a) as number[][]).map((p) => p[1])).size > 5);
    for (const k of [0, 7, 19, 20, 33, 45, FRAMES - 2]) {
      const saved = JSON.parse(checkpoints[k]) as { tracker: unknown; ids: unknown };
      const freshIds = new TrackIds();
      freshIds.restore(saved.ids);
      const restored = new TargetTracker(settings, 0, freshIds, 0.5);
      restored.restore(saved.tracker);
      for (let f = k + 1; f < FRAMES; f++) {
        const out = restored.assign(SCENE[f], INDEX[f]);
        const got = JSON.stringify(out.map((o) => [SCENE[f].indexOf(o.candidate), o.trackId]));
        assert.equal(got, answers[f], `restored after frame ${k}, frame ${f}`);
        assert.equal(JSON.stringify({ tracker: restored.snapshot(), ids: freshIds.snapshot() }), checkpoints[f]);
      }
    }
  });
}

test('TargetTracker and TrackIds refuse state that is not theirs, and a fresh one restores with no gap seen', () => {
  const fresh = new TargetTracker(TRACKER_DEFAULTS, 1, new TrackIds(), 0.5);
  const snap = fresh.snapshot();
  assert.equal(snap.interval, null);
  assert.equal(snap.lastIndex, null);
  const again = new TargetTracker(TRACKER_DEFAULTS, 1, new TrackIds(), 0.5);
  again.restore(JSON.parse(JSON.stringify(snap)));
  assert.deepEqual(again.snapshot(), snap);
  assert.throws(() => again.restore(null), /not a TargetTracker snapshot/);
  assert.throws(() => again.restore({ ...snap, v: 2 }), /not a TargetTracker snapshot/);
  assert.throws(() => again.restore({ ...snap, interval: 'Infinity' }), /not a TargetTracker snapshot/);
  assert.throws(() => again.restore({ ...snap, state: 'not deflate' }), /does not inflate|refused|truncated/);
  assert.throws(
    () => again.restore({ ...snap, state: deflateRawSync(Buffer.from([9, 0, 0, 0, 1])).toString('base64') }),
    /truncated/,
  );
  assert.throws(() => new TargetTracker(TRACKER_DEFAULTS, 2, new TrackIds(), 0.5).restore(snap), /of step 1/);
  assert.throws(() => new TargetTracker(TRACKER_DEFAULTS, 1, new TrackIds(), 0.6).restore(snap), /threshold 0.5/);
  const byte = new TargetTracker({ ...TRACKER_DEFAULTS, type: 'bytetrack' }, 1, new TrackIds(), 0.5);
  assert.throws(() => byte.restore(snap), /other options/);
  const ids = new TrackIds();
  ids.global(0, 4);
  assert.throws(() => ids.restore({ next: 3, keys: ['0:1'] }), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore({ next: 3, keys: ['0:1', '0:1'] }), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore({ next: 2 }), /not a TrackIds snapshot/);
  const v2 = (next: number, map: Record<string, number>, v = 2) => ({
    v,
    next,
    keys: Object.keys(map),
    ids: Object.values(map),
  });
  assert.throws(() => ids.restore(v2(9, { '0:3': 5, '0:1': 4 })), /not a TrackIds snapshot/); // ids not ascending
  assert.throws(() => ids.restore(v2(5, { '0:3': 5 })), /not a TrackIds snapshot/); // an id at next
  assert.throws(() => ids.restore(v2(9, { '0:3': 0 })), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore(v2(9, { '0:x': 2 })), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore(v2(9, { '0:3': 2 }, 3)), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore({ v: 2, next: 9, keys: ['0:3'], ids: [2, 3] }), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore({ v: 2, next: 9, keys: ['0:3', '0:3'], ids: [2, 3] }), /not a TrackIds snapshot/);
  assert.throws(() => ids.restore({ v: 2, next: 9, ids: { '0:3': 2 } }), /not a TrackIds snapshot/);
  assert.equal(ids.global(0, 4), 1); // unchanged by the refusals
  // Version 1 (every key, the n-th with id n) is still read; the next snapshot is version 2.
  const old = new TrackIds();
  old.restore({ next: 3, keys: ['0:7', '1:2'] });
  assert.deepEqual([old.global(1, 2), old.global(0, 7), old.global(0, 9)], [2, 1, 3]);
  assert.deepEqual(old.snapshot(), v2(4, { '0:7': 1, '1:2': 2, '0:9': 3 }));
  // A watched step keeps only its live locals' keys; an unwatched one keeps all, and the ids go on from next.
  old.watch(0, () => [9]);
  assert.deepEqual(old.snapshot(), v2(4, { '1:2': 2, '0:9': 3 }));
  const back = new TrackIds();
  back.restore(JSON.parse(JSON.stringify(old.snapshot())));
  assert.deepEqual([back.global(0, 9), back.global(1, 2), back.global(0, 12)], [3, 2, 4]);
  // Without snapshots (a live task) the keys of gone tracks are swept as the map grows: 10 alive at a time.
  const streaming = new TrackIds();
  let newest = 0;
  streaming.watch(0, () => Array.from({ length: 10 }, (_, i) => newest - i));
  let largest = 0;
  for (newest = 1; newest <= 20_000; newest++) {
    assert.equal(streaming.global(0, newest), newest);
    largest = Math.max(largest, streaming.size);
  }
  assert.ok(largest <= 1025, `${largest} keys held`);
  newest = 20_000;
  assert.equal(streaming.global(0, newest - 9), newest - 9); // a live key survives every sweep
  assert.equal((streaming.snapshot() as TrackIdsSnapshot).keys.length, 10);
});

/**
 * A long task: 5,000 walkers, 50 at a time, each in its own slot of a wide scene and replaced by the next
 * when it leaves (alternately at the slot's left and right so the old track, coasting, never takes the new
 * one). Signatures come from rendered textures (a few colours a part, four poses a walker: the same clothes
 * drawn four ways, so a walker found again after a missed frame still looks like itself).
 */
function longScene(walkersPerSlot: number, slots: number): Candidate[][] {
  const r = lcg(11);
  const frames: Candidate[][] = [];
  const at = (f: number) => (frames[f] ??= []);
  for (let s = 0; s < slots; s++) {
    const ox = 1200 * (s % 10),
      oy = 700 * Math.floor(s / 10);
    let f = Math.floor(r() * 40);
    for (let k = 0; k < walkersPerSlot; k++) {
      const life = 25 + Math.floor(r() * 30);
      const w = 36 + r() * 10,
        h = 90 + r() * 20;
      const x0 = ox + (k % 2 === 0 ? 50 : 600),
        y0 = oy + 50 + r() * 350;
      const vx = 1 + r() * 2,
        vy = (r() - 0.5) * 2;
      const clothes = [palette(r), palette(r)];
      const poses = Array.from({ length: 4 }, () => texturedSignature(r, clothes));
      for (let t = 0; t < life; t++) {
        if (r() < 0.08) continue; // missed by the detector this frame
        const x1 = x0 + vx * t,
          y1 = y0 + vy * t;
        const score = r() < 0.15 ? 0.2 + r() * 0.3 : 0.55 + r() * 0.4;
        at(f + t).push({ box: [x1, y1, x1 + w, y1 + h], score, cls: 'person', signature: poses[t % 4] });
      }
      f += life + Math.floor(r() * 4);
    }
  }
  return Array.from({ length: frames.length }, (_, f) => frames[f] ?? []);
}

/** Three random colours: one part of a walker's clothes. */
function palette(r: () => number): number[][] {
  return Array.from({ length: 3 }, () => [0, 1, 2].map(() => Math.floor(r() * 256)));
}

/**
 * A walker's signature: its upper body and legs each a random mix of their three colours, drawn small (the
 * signature samples a grid of at most 12 x 12 pixels a part, so a larger drawing would only cost time).
 */
function texturedSignature(r: () => number, [top, legs]: number[][][]): Float32Array {
  const width = 20,
    height = 48;
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.set((y < height / 2 ? top : legs)[Math.floor(r() * 3)], (y * width + x) * 3);
  const sig = new Float32Array(SIGNATURE_DIM);
  colourSignature({ data, width, height, channels: 3 }, [0, 0, width, height], sig);
  return sig;
}

/** Tracks in a TargetTracker snapshot (the formats: target-tracker.ts, track.ts, tracker_snapshot.cc). */
function liveInSnapshot(snap: TrackerSnapshot): number {
  const state = inflateRawSync(Buffer.from(snap.state, 'base64'));
  const wrapper = state.subarray(4 + 32 * state.readUInt32LE(0));
  const native = wrapper.subarray(5 + wrapper.readUInt32LE(1));
  return native.readUInt32LE(4 + 2 + 46 + 4 + 8);
}

/**
 * `v` with every object's keys in jsonb's order (shorter first, then by their bytes): the checkpoint is stored
 * as jsonb, so a snapshot must not depend on the order of an object's keys.
 */
function asJsonb(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(asJsonb);
  if (v === null || typeof v !== 'object') return v;
  const keys = Object.keys(v).sort((a, b) => a.length - b.length || Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Object.fromEntries(keys.map((k) => [k, asJsonb((v as Record<string, unknown>)[k])]));
}

const LONG = longScene(100, 50);
const CHUNK = 25;
/**
 * A bound on a chunk's checkpoint (tracker and ids as JSON) over the whole task. The tracker holds more tracks
 * than the 50 walkers in view (those that left coast for max_age frames), so the goal of 16 KB with 50 live
 * tracks is checked on the checkpoints that have at most 50.
 */
const CHECKPOINT_BOUND = 32 * 1024;
const BOUND_AT_50 = 16 * 1024;

for (const [name, settings] of SETTINGS) {
  test(`a long task (${name}): 5,000 tracks, 50 alive at a time, keep the checkpoint bounded and exact`, (t) => {
    const ids = new TrackIds();
    const original = new TargetTracker(settings, 0, ids, 0.5);
    const answers: string[] = [];
    const checkpoints = new Map<number, string>();
    let largest = 0,
      largestAt50 = 0,
      maxLive = 0,
      maxKeys = 0,
      maxId = 0;
    for (let f = 0; f < LONG.length; f++) {
      const out = original.assign(LONG[f], f);
      for (const o of out) maxId = Math.max(maxId, o.trackId);
      answers.push(JSON.stringify(out.map((o) => [LONG[f].indexOf(o.candidate), o.trackId])));
      if (f % CHUNK !== CHUNK - 1) continue;
      const tracker = original.snapshot();
      const idState = ids.snapshot() as TrackIdsSnapshot;
      const json = JSON.stringify({ tracker, ids: idState });
      checkpoints.set(f, json);
      const keys = idState.keys.length;
      const live = liveInSnapshot(tracker);
      // Only keys of tracks still in the tracker are kept, so the ids grow with the live tracks, not with
      // every track the task had (docs/video.md, "What the checkpoint holds", has both sizes).
      assert.ok(keys <= live, `frame ${f}: ${keys} keys, ${live} live tracks`);
      assert.ok(JSON.stringify(idState).length <= 48 + 16 * live, `frame ${f}: ids of ${keys} keys`);
      assert.ok(json.length <= CHECKPOINT_BOUND, `frame ${f}: checkpoint of ${json.length} B, ${live} live tracks`);
      if (live <= 50) largestAt50 = Math.max(largestAt50, json.length);
      maxLive = Math.max(maxLive, live);
      largest = Math.max(largest, json.length);
      maxKeys = Math.max(maxKeys, keys);
    }
    assert.ok(maxId >= 5000, `${maxId} tracks`);
    assert.ok(largestAt50 > 0 && largestAt50 <= BOUND_AT_50, `${largestAt50} B with at most 50 live tracks`);
    t.diagnostic(
      `${name}: ${LONG.length} frames, ${maxId} track ids; checkpoint every ${CHUNK} frames: at most ${largest} B ` +
        `(${maxLive} live tracks at most, ${maxKeys} ids kept at most), at most ${largestAt50} B with <= 50 live tracks`,
    );
    const last = Math.max(...checkpoints.keys());
    for (const k of [CHUNK - 1, Math.floor(LONG.length / (2 * CHUNK)) * CHUNK - 1, last - CHUNK]) {
      const saved = asJsonb(JSON.parse(checkpoints.get(k)!)) as { tracker: unknown; ids: unknown };
      const freshIds = new TrackIds();
      freshIds.restore(saved.ids);
      const restored = new TargetTracker(settings, 0, freshIds, 0.5);
      restored.restore(saved.tracker);
      for (let f = k + 1; f < LONG.length; f++) {
        const out = restored.assign(LONG[f], f);
        const got = JSON.stringify(out.map((o) => [LONG[f].indexOf(o.candidate), o.trackId]));
        assert.equal(got, answers[f], `restored after frame ${k}, frame ${f}`);
        const want = checkpoints.get(f);
        if (want) assert.equal(JSON.stringify({ tracker: restored.snapshot(), ids: freshIds.snapshot() }), want);
      }
    }
  });
}
