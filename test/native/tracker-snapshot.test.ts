// Tracker snapshots through the real addon: a tracker restored from a snapshot (taken at any frame) answers the
// rest of a scene exactly as the original did, for SORT, ByteTrack and the crowd options, with string classes
// and colour signatures; bad snapshots are refused with the tracker unchanged; and TargetTracker's snapshot
// survives JSON and restores into a fresh TargetTracker (with its TrackIds) that assigns the same ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { Tracker, type TrackerDetection, type TrackerOptions } from '../../src/native/track.js';
import {
  CROWD,
  TargetTracker,
  TrackIds,
  TRACKER_DEFAULTS,
  type Candidate,
  type TrackerSettings,
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
  nativeVersion[5 + headerLength + 4] = 2; // the native format's version
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
  assert.equal(ids.global(0, 4), 1); // unchanged by the refusals
});
