// How big a tracker checkpoint is with 50 live tracks carrying colour signatures of real people: 50 walkers,
// each one of the PETS09-S2L1 people (ground-truth boxes) from its own start frame, tiled apart so each keeps
// one track, with signatures from the real frames' pixels, through the video pipeline's TargetTracker. It
// prints the sizes (docs/video.md, "What the checkpoint holds", has them) and checks the encoding stays
// sparse: a dense signature or covariance would be several times larger.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { decodeJpeg } from '../../src/native/image.js';
import { colourSignature, SIGNATURE_DIM } from '../../src/media/colour-signature.js';
import { TargetTracker, TrackIds, TRACKER_DEFAULTS, type Candidate } from '../../src/video/pipeline/target-tracker.js';
import { evalData } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';

const SEQ = join('tracking', 'PETS09-S2L1');
const WALKERS = 50;
const STEPS = 60;

/** Live tracks in a TargetTracker snapshot's state (the formats: target-tracker.ts, tracker_snapshot.cc). */
function liveTracks(state: Buffer): { tracks: number; native: number } {
  const n = state.readUInt32LE(0);
  const wrapper = state.subarray(4 + 32 * n);
  const native = wrapper.subarray(5 + wrapper.readUInt32LE(1));
  return { tracks: native.readUInt32LE(4 + 2 + 46 + 4 + 8), native: native.length };
}

test('a checkpoint with 50 live tracks of real colour signatures', { skip: evalDataSkip(SEQ) }, async (t) => {
  const dir = evalData(SEQ);
  const gt = readFileSync(join(dir, 'gt', 'gt.txt'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(',').map(Number));
  const frames = 300; // the JPEGs at hand
  const boxOf = new Map<string, number[]>(); // `${person}:${frame}`
  const life = new Map<number, [number, number]>();
  for (const [f, id, x, y, w, h] of gt) {
    if (f > frames) continue;
    boxOf.set(`${id}:${f}`, [x, y, x + w, y + h]);
    const l = life.get(id);
    life.set(id, l ? [Math.min(l[0], f), Math.max(l[1], f)] : [f, f]);
  }
  const people = [...life].filter(([, [a, b]]) => b - a >= STEPS + 40).map(([id, [a, b]]) => ({ id, a, b }));
  assert.ok(people.length >= 5, 'enough long-lived people');
  // Walker j: person j % P from its own start frame, tiled 800 x 600 apart.
  const walkers = Array.from({ length: WALKERS }, (_, j) => {
    const p = people[j % people.length];
    const start = p.a + ((Math.floor(j / people.length) * 13) % (p.b - p.a - STEPS));
    return { id: p.id, start, dx: 800 * (j % 10), dy: 600 * Math.floor(j / 10) };
  });
  // Signatures per (walker, step), decoding every frame once.
  const sigs = new Map<string, Float32Array>();
  for (let f = 1; f <= frames; f++) {
    const needs = walkers.flatMap((w, j) => {
      const s = f - w.start;
      return s >= 0 && s < STEPS && boxOf.has(`${w.id}:${f}`) ? [{ j, s, box: boxOf.get(`${w.id}:${f}`)! }] : [];
    });
    if (needs.length === 0) continue;
    const image = await decodeJpeg(readFileSync(join(dir, 'img1', `${String(f).padStart(6, '0')}.jpg`)), 1e7);
    assert.ok(image);
    for (const { j, s, box } of needs) {
      const sig = new Float32Array(SIGNATURE_DIM);
      colourSignature(image, box, sig);
      sigs.set(`${j}:${s}`, sig);
    }
  }
  for (const type of ['sort', 'bytetrack'] as const) {
    const ids = new TrackIds();
    const tracker = new TargetTracker({ ...TRACKER_DEFAULTS, type }, 0, ids, 0.5);
    let last = { json: 0, deflated: 0, raw: 0, native: 0, tracks: 0 };
    const perTrack: number[] = [];
    for (let s = 0; s < STEPS; s++) {
      const candidates: Candidate[] = [];
      walkers.forEach((w, j) => {
        const box = boxOf.get(`${w.id}:${w.start + s}`);
        const signature = sigs.get(`${j}:${s}`);
        if (!box || !signature) return;
        const b = [box[0] + w.dx, box[1] + w.dy, box[2] + w.dx, box[3] + w.dy] as const;
        candidates.push({ box: b, score: 0.9, cls: 'person', signature });
      });
      tracker.assign(candidates, s);
      const snap = tracker.snapshot();
      const deflated = Buffer.from(snap.state, 'base64');
      const state = inflateRawSync(deflated);
      const { tracks, native } = liveTracks(state);
      last = {
        json: JSON.stringify({ tracker: snap, ids: ids.snapshot() }).length,
        deflated: deflated.length,
        raw: state.length,
        native,
        tracks,
      };
      if (s >= 20) perTrack.push(deflated.length / tracks);
    }
    t.diagnostic(
      `${type}: ${last.tracks} live tracks after ${STEPS} frames: native ${last.native} B, state ${last.raw} B, ` +
        `deflated ${last.deflated} B, checkpoint JSON (base64) ${last.json} B; deflated per track ` +
        `${Math.min(...perTrack).toFixed(0)}-${Math.max(...perTrack).toFixed(0)} B over frames 20-${STEPS - 1}`,
    );
    assert.ok(last.tracks >= WALKERS, `${last.tracks} live tracks`);
    // Dense signatures alone would be 256 B a track; the sparse encoding stays well under that in all.
    assert.ok(Math.max(...perTrack) < 250, `deflated ${Math.max(...perTrack)} B a track`);
    // Issue #47's bound: the whole tracker part of a checkpoint (state and ids, as JSON) within 16 KB.
    assert.ok(last.json <= 16 * 1024, `checkpoint tracker part ${last.json} B`);
  }
});
