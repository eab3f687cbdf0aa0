// The tracker through the real addon: synthetic crossing and occlusion scenarios keep ids, ids are never
// reused, classes never mix, ByteTrack's low-score pass, report modes, skipped frames, and parameter validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tracker, type TrackerDetection } from '../../src/native/track.js';
import { ApiError } from '../../src/base/errors.js';
import { TargetTracker, TrackIds, TRACKER_DEFAULTS } from '../../src/video/pipeline/target-tracker.js';

const person = (x: number, y: number, extra: Partial<TrackerDetection> = {}): TrackerDetection => ({
  box: [x, y, x + 40, y + 100],
  ...extra,
});

/** trackId by input index for one update. */
function ids(tracker: Tracker, dets: TrackerDetection[], steps?: number): Array<number | undefined> {
  const out: Array<number | undefined> = new Array(dets.length).fill(undefined);
  for (const t of tracker.update(dets, steps)) out[t.index] = t.trackId;
  return out;
}

test('two people crossing paths keep their ids, including while one is hidden', () => {
  const tracker = new Tracker({ minHits: 1, maxAge: 10 });
  let a0 = 0,
    b0 = 0;
  for (let t = 0; t < 70; t++) {
    const ax = 20 + 6 * t,
      bx = 440 - 6 * t;
    const hidden = t >= 33 && t < 38; // B is occluded by A where they overlap
    const dets = [person(ax, 200)];
    if (!hidden) dets.push(person(bx, 206));
    const [a, b] = ids(tracker, dets);
    if (t === 0) [a0, b0] = [a as number, b as number];
    assert.equal(a, a0, `A at frame ${t}`);
    if (!hidden) assert.equal(b, b0, `B at frame ${t}`);
  }
  assert.notEqual(a0, b0);
});

test('an occluded target coasts on its velocity and is picked up again', () => {
  const tracker = new Tracker({ minHits: 1, maxAge: 15 });
  let id = 0;
  for (let t = 0; t < 40; t++) {
    const dets = t >= 15 && t < 25 ? [] : [person(10 + 8 * t, 100)]; // 10 frames behind a pillar, moving 8 px/frame
    const out = ids(tracker, dets);
    if (t === 0) id = out[0] as number;
    if (dets.length) assert.equal(out[0], id, `frame ${t}`);
  }
});

test('ids start at 1, are per instance, and are never reused after a track dies', () => {
  const a = new Tracker({ minHits: 1, maxAge: 2 });
  const b = new Tracker({ minHits: 1, maxAge: 2 });
  assert.deepEqual(ids(a, [person(0, 0), person(300, 0)]), [1, 2]);
  assert.deepEqual(ids(b, [person(0, 0)]), [1]); // another instance counts on its own
  const seen = new Set<number>([1, 2]);
  for (let round = 0; round < 5; round++) {
    for (let t = 0; t < 4; t++) ids(a, []); // long enough for every track to die
    assert.equal(a.liveTracks, 0);
    const [id] = ids(a, [person(0, 0)]); // same place, new object: new id
    assert.ok(id !== undefined && !seen.has(id), `id ${id} reused`);
    seen.add(id);
  }
  assert.equal(a.frames, 1 + 5 * 5);
});

test('class-aware: a car and a person in the same place never share a track', () => {
  const tracker = new Tracker({ minHits: 1 });
  const [p] = ids(tracker, [person(0, 0, { class: 'person' })]);
  const [c] = ids(tracker, [person(1, 0, { class: 'car' })]);
  assert.notEqual(c, p);
  const both = ids(tracker, [person(2, 0, { class: 'car' }), person(2, 0, { class: 'person' })]);
  assert.deepEqual(both, [c, p]);
});

test("report: 'confirmed' hides tentative tracks; 'all' gives every detection a stable id", () => {
  const confirmed = new Tracker({ minHits: 3 });
  const all = new Tracker({ minHits: 3, report: 'all' });
  for (let t = 0; t < 4; t++) {
    confirmed.update([]);
    all.update([]);
  } // past SORT's warm-up frames
  const seenAll: number[] = [];
  const seenConfirmed: Array<number | undefined> = [];
  for (let t = 0; t < 5; t++) {
    const d = [person(100 + 3 * t, 50)];
    seenConfirmed.push(ids(confirmed, d)[0]);
    const r = all.update(d);
    assert.equal(r.length, 1);
    seenAll.push(r[0].trackId);
    assert.equal(r[0].confirmed, t >= 2);
  }
  assert.deepEqual(seenConfirmed, [undefined, undefined, 1, 1, 1]);
  assert.deepEqual(seenAll, [1, 1, 1, 1, 1]);
});

test('ByteTrack keeps a track through low-score frames and never starts one from a low score', () => {
  const sort = new Tracker({ minHits: 1 });
  const byte = new Tracker({ minHits: 1, byteTrack: { highThresh: 0.6, lowThresh: 0.1 } });
  const scores = [0.9, 0.9, 0.3, 0.3, 0.9];
  const byteIds = scores.map((score, t) => ids(byte, [person(10 + 5 * t, 10, { score })])[0]);
  assert.deepEqual(byteIds, [1, 1, 1, 1, 1]);
  const sortIds = scores.map((score, t) => ids(sort, [person(10 + 5 * t, 10, { score })])[0]);
  assert.deepEqual(sortIds, [1, 1, 1, 1, 1]); // plain SORT ignores scores
  assert.deepEqual(ids(byte, [person(600, 10, { score: 0.3 })]), [undefined]);
});

test('hundreds of moving boxes keep their ids', () => {
  const tracker = new Tracker({ minHits: 1 });
  let first: Array<number | undefined> = [];
  for (let t = 0; t < 30; t++) {
    const dets: TrackerDetection[] = [];
    for (let i = 0; i < 300; i++) {
      const x = (i % 30) * 64 + ((i * 7) % 5) * t,
        y = Math.floor(i / 30) * 108 + ((i * 3) % 4) * t * 0.5;
      dets.push({ box: [x, y, x + 30, y + 70], score: 0.9 });
    }
    const out = ids(tracker, dets);
    if (t === 0) first = out;
    assert.deepEqual(out, first);
  }
  assert.equal(new Set(first).size, 300);
});

test('frames skipped by the source: motion is predicted over the whole gap (steps), and the pipeline learns the interval from frame indices', () => {
  // A person walking 14 px a frame, seen every 5th frame (sampling), then 20 frames skipped.
  const walk = (x: number): TrackerDetection => ({ box: [x, 50, x + 40, 130], score: 0.9, class: 'person' });
  for (const steps of [1, 4]) {
    const tracker = new Tracker({ minHits: 1, report: 'all' });
    for (let t = 0; t < 6; t++) ids(tracker, [walk(14 * t)]);
    assert.deepEqual(ids(tracker, [walk(14 * 9)], steps), [steps === 4 ? 1 : 2]);
  }
  // TargetTracker turns source frame indices into steps: indices 0, 5, 10, ... then a jump of 20.
  const target = new TargetTracker({ ...TRACKER_DEFAULTS, minHits: 1 }, 0, new TrackIds(), 0.5);
  const person = (x: number) => [{ box: [x, 50, x + 40, 130] as const, score: 0.9, cls: 'person' }];
  const seen = new Set<number>();
  for (let t = 0; t < 6; t++) for (const r of target.assign(person(14 * t), 5 * t)) seen.add(r.trackId);
  for (const r of target.assign(person(14 * 9), 5 * 9)) seen.add(r.trackId);
  assert.deepEqual([...seen], [1]);
});

test('options and detections are validated with catalogue errors', () => {
  assert.throws(
    () => new Tracker({ maxAge: -1 }),
    (e: unknown) => e instanceof ApiError && e.param === 'maxAge',
  );
  assert.throws(
    () => new Tracker({ iouThreshold: 2 }),
    /Expected number between 0.01 and 1 for iouThreshold but received 2/,
  );
  assert.throws(() => new Tracker({ byteTrack: { highThresh: 0.3, lowThresh: 0.5 } }), ApiError);
  assert.throws(() => new Tracker({ report: 'some' as 'all' }), ApiError);
  const t = new Tracker();
  assert.throws(
    () => t.update([{ box: [10, 10, 5, 20] }]),
    (e: unknown) => e instanceof ApiError && e.param === 'detections[0].box',
  );
  assert.throws(() => t.update([{ box: [0, 0, NaN, 1] }]), ApiError);
  assert.throws(
    () => t.update([], 0),
    (e: unknown) => e instanceof ApiError && e.param === 'steps',
  );
  assert.throws(
    () => t.update([], 1.5),
    (e: unknown) => e instanceof ApiError && e.param === 'steps',
  );
  assert.equal(t.frames, 0); // a rejected frame is not counted
  assert.deepEqual(t.update([]), []);
  assert.equal(t.frames, 1);
});

test('appearance: two people side by side who swap places keep their ids when their colours differ', () => {
  const red = Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0));
  const blue = Float32Array.from({ length: 8 }, (_, i) => (i === 7 ? 1 : 0));
  const run = (opts: ConstructorParameters<typeof Tracker>[0]) => {
    const t = new Tracker({ report: 'all', ...opts });
    let before: Array<number | undefined> = [];
    for (let f = 0; f < 5; f++)
      before = ids(t, [person(100, 100, { signature: red }), person(110, 100, { signature: blue })]);
    // Red is now right of blue, each box nearer the other's track.
    return { before, after: ids(t, [person(108, 100, { signature: red }), person(102, 100, { signature: blue })]) };
  };
  const plain = run({});
  assert.deepEqual(plain.after, [plain.before[1], plain.before[0]]);
  const looks = run({ appearance: { dim: 8, weight: 0.8 } });
  assert.deepEqual(looks.after, looks.before);
  // A detection without a signature among ones with: it matches on IoU alone.
  const t = new Tracker({ report: 'all', appearance: { dim: 8 } });
  assert.equal(t.update([person(0, 0), person(300, 0, { signature: red })]).length, 2);
});

test('appearance.reacquire: a track that missed a frame takes no one who looks unlike it; a continuing one does', () => {
  const red = Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0));
  const blue = Float32Array.from({ length: 8 }, (_, i) => (i === 7 ? 1 : 0));
  // A red person for five frames, `gap` empty frames, then a blue person where the red one was.
  const run = (reacquire: number, gap: number) => {
    const t = new Tracker({ report: 'all', appearance: { dim: 8, weight: 0.8, reacquire } });
    let id: number | undefined;
    for (let f = 0; f < 5; f++) [id] = ids(t, [person(100, 100, { signature: red })]);
    for (let f = 0; f < gap; f++) t.update([]);
    return [id, ids(t, [person(100, 100, { signature: blue })])[0]];
  };
  const [a, b] = run(0, 1);
  assert.equal(a, b);
  const [c, d] = run(0.35, 1);
  assert.notEqual(c, d);
  const [e, f] = run(0.35, 0);
  assert.equal(e, f);
  assert.throws(
    () => new Tracker({ appearance: { dim: 8, reacquire: 1.5 } }),
    (e: unknown) => e instanceof ApiError && e.param === 'appearance.reacquire',
  );
});

test('the buffered pass: a person off the prediction keeps the id if seen within maxLost intervals', () => {
  const run = (opts: ConstructorParameters<typeof Tracker>[0], gap: number) => {
    const t = new Tracker({ report: 'all', ...opts });
    let id: number | undefined;
    for (let f = 0; f < 5; f++) [id] = ids(t, [person(100, 100)]);
    for (let f = 0; f < gap; f++) t.update([]);
    return [id, ids(t, [person(135, 100)])[0]];
  };
  const [a, b] = run({}, 0);
  assert.notEqual(a, b);
  const [c, d] = run({ buffered: { buffer: 1 } }, 3);
  assert.equal(c, d);
  const [e, f] = run({ buffered: { buffer: 1, maxLost: 2 } }, 3);
  assert.notEqual(e, f);
});

test('appearance and buffered options and signatures are validated with catalogue errors', () => {
  assert.throws(
    () => new Tracker({ appearance: { dim: 0 } }),
    (e: unknown) => e instanceof ApiError && e.param === 'appearance.dim',
  );
  assert.throws(
    () => new Tracker({ appearance: { dim: 8, weight: 2 } }),
    (e: unknown) => e instanceof ApiError && e.param === 'appearance.weight',
  );
  assert.throws(
    () => new Tracker({ buffered: { buffer: -1 } }),
    (e: unknown) => e instanceof ApiError && e.param === 'buffered.buffer',
  );
  assert.throws(
    () => new Tracker({ buffered: { buffer: 1, maxLost: 0 } }),
    (e: unknown) => e instanceof ApiError && e.param === 'buffered.maxLost',
  );
  const t = new Tracker({ appearance: { dim: 8 } });
  assert.throws(
    () => t.update([person(0, 0, { signature: new Float32Array(3) })]),
    (e: unknown) => e instanceof ApiError && e.param === 'detections[0].signature',
  );
});
