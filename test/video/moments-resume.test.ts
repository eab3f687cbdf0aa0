// The index step continued on another worker (docs/moments.md, "When a worker dies"), at the pipeline level
// without killing processes: a detect step and an index step over people walking (TUD-Campus from the
// evaluation data) write segments and tracks to a real collection, frame by frame through FramePipeline as the
// local provider drives it (each frame's chunk hook, then the snapshot its checkpoint would carry, then the
// chunk's bytes "archived"). A run is stopped after frame k (k at the start, while items are being written, in
// the middle, near and at the end), its snapshot goes through JSON, the dead worker's pipeline still runs the
// next frame's chunk hook (so items it closes there are written twice), and a fresh pipeline restores the
// snapshot with a refetch that decodes the frame again, then runs the rest. The collection's items (ids,
// metadata, vectors, thumbnails) and the task's counts equal an undisturbed run's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, type TestApp } from '../helpers/app.js';
import { createTask, startVideoApp } from '../helpers/video-tasks.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { VideoDecoder } from '../../src/video/source/decoder.js';
import type { DecoderCursor } from '../../src/native/decode.js';
import { FramePipeline, type PipelineFrame } from '../../src/video/steps/frame-pipeline.js';
import type { FrameOutput, VideoTaskRequest } from '../../src/video/task-contract.js';
import type { StepTask } from '../../src/video/pipeline/frame-step.js';
import type { RgbImage } from '../../src/media/rgb-image.js';
import type { CollectionsPort } from '../../src/services/collections-port.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql as taskSql } from '../../src/video/tasks.sql.js';
import { CollectionStore } from '../../src/vectors/collection-store.js';
import { indexSummary } from '../../src/video/moments/task-record.js';
import { MomentIndexer } from '../../src/video/moments/moment-indexer.js';
import type { IndexSettings } from '../../src/video/moments/index-step.js';
import { packIndexSnapshot, unpackIndexSnapshot, type IndexSnapshot } from '../../src/video/moments/moment-snapshot.js';

const skip = evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');
const SAMPLING = { mode: 'fps', value: 10 } as const;

let t: TestApp;
let col: string;
/** The sampled frames of TUD-Campus, decoded once. */
let frames: Array<PipelineFrame & { ptsMs: number; cursor: DecoderCursor }>;
let fps: number;

before(async () => {
  if (skip) return;
  t = await startVideoApp();
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'resumed-moments' } });
  assert.equal(r.status, 201, r.text);
  col = r.body.id;
  const d = await VideoDecoder.open(TUD_CAMPUS(), { sampling: SAMPLING });
  fps = d.info.fps;
  frames = [];
  try {
    for (;;) {
      const b = await d.read(8);
      for (const f of b.frames)
        frames.push({
          index: f.index,
          width: f.width,
          height: f.height,
          data: f.data,
          ptsMs: f.ptsMs,
          cursor: f.cursor!,
        });
      if (b.finishReason) break;
    }
  } finally {
    await d.close();
  }
});
after(async () => {
  await t?.close();
});

/** Sampled frame i's `before` reference, as the local provider sets it: the decoder's cursor of the sampled
 * frame before it, null for the first. */
const beforeOf = (i: number) => (i === 0 ? null : frames[i - 1]!.cursor);

/** Decodes the frame after `before` again, as the local provider does: a fresh decoder resumed at that cursor. */
async function refetch(before: unknown): Promise<RgbImage> {
  const d = await VideoDecoder.open(TUD_CAMPUS(), {
    sampling: SAMPLING,
    // The cap counts the task's frames up to the cursor's: one more is the frame after it.
    maxFrames: ((before as DecoderCursor | null)?.emittedFrames ?? 0) + 1,
    ...(before === null ? {} : { resume: before as DecoderCursor }),
  });
  try {
    const f = (await d.read(1)).frames[0];
    if (!f) throw new Error('the frame could not be decoded again');
    return { data: f.data, width: f.width, height: f.height, channels: 3 };
  } finally {
    await d.close();
  }
}

const request = (): VideoTaskRequest =>
  ({
    input: [{ type: 'video_url', url: 'http://127.0.0.1:9/tud-campus.mp4', sampling: SAMPLING }],
    steps: [
      { model: 'detect', parameters: { classes: ['person'] } },
      {
        model: 'index',
        parameters: { collection: col, per: ['segment', 'track'], segment_ms: 500 },
      },
    ],
  }) as VideoTaskRequest;

/** A worker that can be killed: once `killed`, the writes of its index step never happen, unless already under
 * way for WRITE_DELAY_MS (then it completes, as a committed transaction would). */
const WRITE_DELAY_MS = 300;

interface Worker {
  killed: boolean;
}

/** Its collections: the real ones, writes refused once it is killed. */
function collectionsOf(w: Worker): CollectionsPort {
  const real = t.app.collections!;
  return {
    async writer(projectId, collectionId, param) {
      const writer = await real.writer(projectId, collectionId, param);
      return {
        collectionId: writer.collectionId,
        modelId: writer.modelId,
        dimensions: writer.dimensions,
        embedsText: writer.embedsText,
        embedImage: (image, signal) => writer.embedImage(image, signal),
        embedText: (text, signal) => writer.embedText(text, signal),
        add: async (items) => {
          await sleep(WRITE_DELAY_MS);
          if (w.killed) throw new Error('the worker was killed');
          await writer.add(items);
        },
      };
    },
  };
}

/** A task as the API stores it (the test app runs no worker, so it stays queued). */
const newTask = async (): Promise<string> => createTask(t, request());

/** The task as one worker runs it. */
function on(taskId: string, w: Worker = { killed: false }): StepTask {
  const s = t.app.services;
  return {
    id: taskId,
    projectId: t.projectId,
    request: request(),
    services: { db: s.db, log: s.log, collections: collectionsOf(w) },
  };
}

/** One task's archive as the index step sees it: only its byte count (a moment's stream_offset). */
class Archive {
  bytes = 0;
  constructor(readonly taskId: string) {}
  async append(n: number): Promise<void> {
    this.bytes += n;
    await t.app.services.db.query(taskSql.appendedBytes, [this.taskId, n]);
  }
  /** Back to `bytes` (what a later worker finds after the checkpoint it continues from). */
  async rewind(bytes: number): Promise<void> {
    await this.append(bytes - this.bytes);
  }
}

const pipeline = (task: StepTask) => FramePipeline.create(task.request, t.app.services.taskModels, task);

/** Frame i through the pipeline as the local provider runs it; the chunk, with analytics-like zone events for
 * people in the left third (so the items' zones are restored too). */
async function frameOf(p: FramePipeline, i: number): Promise<FrameOutput> {
  const f = frames[i]!;
  const targets = await p.process({ ...f, before: beforeOf(i) });
  const events = targets
    .filter((x) => x.roi.left < f.width / 3)
    .map((x) => ({ type: 'zone.entered', rule: 'left', track_id: x.track_id }));
  const out = {
    stream_info: {
      frame_index: f.index,
      total_frames: null,
      decoded_frames: i + 1,
      dropped_frames: 0,
      fps,
      elapsed_ms: 0,
      stream_time_ms: f.ptsMs,
    },
    delta: { results: [{ index: 0, targets }] },
    ...(events.length ? { analytics: { events, totals: {} } } : {}),
  } as FrameOutput;
  await p.chunk(out);
  return out;
}

interface Step {
  snapshot: string;
  /** The index step's part of it, as stored and unpacked. */
  stored: string;
  index: IndexSnapshot;
}

/** Frames from..to-1 on p, each chunk "archived" after its snapshot was taken, as the worker appends it. */
async function run(p: FramePipeline, archive: Archive, from: number, to: number, steps?: Step[]): Promise<void> {
  for (let i = from; i < to; i++) {
    const out = await frameOf(p, i);
    const snap = p.snapshot();
    assert.ok(snap, `frame ${i}: the pipeline with an index step gives a snapshot`);
    const json = JSON.stringify(snap);
    steps?.push({
      snapshot: json,
      stored: JSON.stringify(snap.runs[1]),
      index: unpackIndexSnapshot(snap.runs[1]) as IndexSnapshot,
    });
    await archive.append(Buffer.byteLength(JSON.stringify(out)) + 20);
  }
}

interface Item {
  metadata: Record<string, unknown>;
  vector: Float32Array;
  jpeg: Buffer;
}

/** The task's items by id without the task's prefix, their metadata without the task id. */
async function itemsOf(taskId: string): Promise<Map<string, Item>> {
  const store = new CollectionStore(t.app.services.db);
  const all = (await store.listItems(col, 10_000, 0)).filter((it) => it.metadata.task_id === taskId);
  const vectors = await store.itemsByKeys(
    col,
    all.map((it) => it.key),
  );
  const out = new Map<string, Item>();
  for (const it of all) {
    assert.ok(it.id.startsWith(`${taskId}.`), it.id);
    out.set(it.id.slice(taskId.length), {
      metadata: { ...it.metadata, task_id: '-' },
      vector: vectors.get(it.key)!.vector,
      jpeg: await t.app.services.blobs.read(it.blob_key!),
    });
  }
  return out;
}

function assertSameItems(got: Map<string, Item>, want: Map<string, Item>, what: string): void {
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${what}: item ids`);
  for (const [id, w] of want) {
    const g = got.get(id)!;
    assert.deepEqual(g.metadata, w.metadata, `${what}: ${id} metadata`);
    assert.equal(g.vector.length, w.vector.length);
    let d = 0;
    for (let i = 0; i < w.vector.length; i++) d = Math.max(d, Math.abs(g.vector[i]! - w.vector[i]!));
    assert.ok(d <= 1e-4, `${what}: ${id} vector differs by ${d}`);
    assert.ok(g.jpeg.equals(w.jpeg), `${what}: ${id} thumbnail`);
  }
}

const countsOf = async (taskId: string) => {
  const r = (await indexSummary(t.app.services.db, taskId)).index as Record<string, unknown>;
  return { ...r, collection: r.collection === col } as Record<string, unknown> & { collection: boolean };
};

test('index step resumed from its snapshot at frame k writes what an undisturbed run writes, each item counted once', {
  skip,
  timeout: 900_000,
}, async () => {
  const n = frames.length;
  // The undisturbed run, with the snapshot after every frame.
  const a = on(await newTask());
  const steps: Step[] = [];
  const pa = await pipeline(a);
  await run(pa, new Archive(a.id), 0, n, steps);
  await pa.finish();
  const want = await itemsOf(a.id);
  const wantCounts = await countsOf(a.id);
  assert.ok(want.size >= 4, `items written: ${[...want.keys()].join(', ')}`);
  assert.ok([...want.keys()].some((id) => id.startsWith('.t')) && [...want.keys()].some((id) => id.startsWith('.s')));
  assert.ok(
    [...want.values()].some((it) => (it.metadata.zones as string[] | undefined)?.includes('left')),
    'some items carry the zone',
  );
  assert.equal(wantCounts.items_added, want.size);

  const sizes = steps.map((s) => Buffer.byteLength(s.snapshot));
  const indexSizes = steps.map((s) => Buffer.byteLength(s.stored));
  const rawSizes = steps.map((s) => Buffer.byteLength(JSON.stringify(s.index)));
  const inFlight = steps.findIndex((s, i) => i >= 2 && i < n - 2 && s.index.pending.length > 0);
  assert.ok(inFlight >= 0, 'some snapshot was taken while items were being written');
  const ks = [...new Set([0, inFlight, Math.floor(n / 2), n - 2, n - 1])].sort((x, y) => x - y);
  const restoreMs: number[] = [];

  for (const k of ks) {
    const b = await newTask();
    const archive = new Archive(b);
    const worker: Worker = { killed: false };
    const dead = await pipeline(on(b, worker));
    await run(dead, archive, 0, k + 1);
    const snap = JSON.parse(JSON.stringify(dead.snapshot()));
    const atK = archive.bytes;
    // The dead worker got as far as the next frame's chunk hook and was killed before that chunk was archived
    // (no finish, no close): at its checkpoint where items were being written then (only the next worker writes
    // them), else a second later (the items it closed after its checkpoint are written, then written again).
    if (k === inFlight) worker.killed = true;
    if (k + 1 < n) await frameOf(dead, k + 1);
    await sleep(1000);
    worker.killed = true;
    const next = await pipeline(on(b));
    const t0 = performance.now();
    await next.restore(snap, refetch);
    restoreMs.push(performance.now() - t0);
    await run(next, archive, k + 1, n);
    await next.finish();
    assertSameItems(await itemsOf(b), want, `resumed after frame ${k}`);
    assert.deepEqual(await countsOf(b), wantCounts, `resumed after frame ${k}: counts`);

    if (k === inFlight) {
      // That worker died too, at the very end, and a third one continued from the same checkpoint: every item
      // after it is written once more, and still counted once.
      await archive.rewind(atK);
      const third = await pipeline(on(b));
      await third.restore(snap, refetch);
      await run(third, archive, k + 1, n);
      await third.finish();
      assertSameItems(await itemsOf(b), want, `resumed twice after frame ${k}`);
      assert.deepEqual(await countsOf(b), wantCounts, `resumed twice after frame ${k}: counts`);
    }
  }
  const distinct = steps.map((s) => s.index.frames.length);
  console.log(
    `index step snapshot on TUD-Campus (${n} frames at ${SAMPLING.value} fps, ${want.size} items): ` +
      `max ${Math.max(...indexSizes)} B stored (${Math.max(...rawSizes)} B of JSON before deflate; the pipeline's ` +
      `${Math.max(...sizes)} B), frames named max ${Math.max(...distinct)}, ` +
      `pending max ${Math.max(...steps.map((s) => s.index.pending.length))}; ` +
      `restore after frames ${ks.join(', ')}: ${restoreMs.map((x) => x.toFixed(0)).join(', ')} ms`,
  );
});

test('index step: a malformed snapshot is refused before anything is restored', { skip }, async () => {
  const p = await pipeline(on(await newTask()));
  const good = (await pipeline(on(await newTask()))).snapshot()!;
  const idx = unpackIndexSnapshot(good.runs[1]) as Record<string, unknown>;
  const packed = (x: object) => packIndexSnapshot(x as IndexSnapshot);
  for (const bad of [
    { v: 2, z: (good.runs[1] as { z: string }).z },
    { v: 1, z: 'not deflated' },
    packed({ ...idx, v: 2 }),
    packed({ ...idx, frames: 'x' }),
    packed({ ...idx, segment: { shot: 0 } }),
    packed({ ...idx, tracks: [{ id: 1, cls: 'person', crop: { frame: 7, roi: [0, 0, 9, 9] } }] }),
    packed({ ...idx, pending: [{ kind: 'frame', endMs: 0 }] }),
  ]) {
    await assert.rejects(
      p.restore({ ...good, runs: [good.runs[0], bad] }, () => Promise.reject(new Error('not called'))),
      /index step's checkpoint is malformed/,
    );
  }
});

test('index step with 50 live tracks: its share of a checkpoint, and a restore that gives the same snapshot back', {
  skip,
  timeout: 300_000,
}, async () => {
  // An hour into a task: frame indices, stream times and byte offsets of that many digits.
  const taskId = await newTask();
  const archive = new Archive(taskId);
  await archive.append(50_000_000);
  const task = on(taskId);
  const settings: IndexSettings = {
    index: 1,
    collection: col,
    segments: true,
    tracks: true,
    segmentMs: 4000,
    segmenting: 'scene',
    videoId: undefined,
  };
  const writer = await t.app.collections!.writer(t.projectId, col, 'collection');
  const deps = { db: t.app.services.db, log: t.app.services.log };
  const indexer = new MomentIndexer(settings, writer, task, deps);
  let seed = 11;
  const rnd = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const first = 90_000;
  const befores = new Map<string, RgbImage>();
  const sizes: number[] = [];
  const snapshotMs: number[] = [];
  const distinct: number[] = [];
  let last: { packed: unknown; index: number } | null = null;
  for (let i = 0; i < 80; i++) {
    const f = frames[i % frames.length]!;
    const index = first + i * 2;
    const image: RgbImage = { data: f.data, width: f.width, height: f.height, channels: 3 };
    // 50 people on a 10 x 5 grid, each moving a little, confidences as a detector's (4 digits).
    const targets = Array.from({ length: 50 }, (_, k) => ({
      track_id: 3000 + k,
      class: 'person',
      confidence: Math.round((0.4 + 0.6 * rnd()) * 1e4) / 1e4,
      roi: {
        left: Math.round(((k % 10) * 64 + rnd() * 4) * 10) / 10,
        top: Math.round((Math.floor(k / 10) * 96 + rnd() * 4) * 10) / 10,
        width: Math.round((40 + rnd() * 20) * 10) / 10,
        height: Math.round((70 + rnd() * 20) * 10) / 10,
      },
    }));
    const out = {
      stream_info: {
        frame_index: index,
        total_frames: null,
        decoded_frames: index + 1,
        dropped_frames: 0,
        fps: 25,
        elapsed_ms: 0,
        stream_time_ms: index * 40,
      },
      delta: { results: [{ index: 0, targets }] },
    } as FrameOutput;
    // A cursor as a decoder gives one, of this frame's numbers (its hash made up, as incompressible as a real one).
    const before = { ...f.cursor, index: index - 2, ptsMs: (index - 2) * 40, hash: (rnd() * 2 ** 52).toString(16) };
    befores.set(JSON.stringify(before), image);
    await indexer.chunk(out, { index, width: f.width, height: f.height, image, before });
    const s0 = performance.now();
    const packed = indexer.snapshot();
    snapshotMs.push(performance.now() - s0);
    sizes.push(Buffer.byteLength(JSON.stringify(packed)));
    distinct.push((unpackIndexSnapshot(packed) as IndexSnapshot).frames.length);
    last = { packed, index };
    await archive.append(Buffer.byteLength(JSON.stringify(out)) + 20);
  }
  const raw = Buffer.byteLength(JSON.stringify(unpackIndexSnapshot(last!.packed)));
  const again = new MomentIndexer(settings, writer, task, deps);
  const t0 = performance.now();
  await again.restore(JSON.parse(JSON.stringify(last!.packed)), async (before) => befores.get(JSON.stringify(before))!);
  const restoreMs = performance.now() - t0;
  assert.deepEqual(unpackIndexSnapshot(again.snapshot()), unpackIndexSnapshot(last!.packed));
  console.log(
    `index step snapshot with 50 live tracks: ${Math.min(...sizes.slice(10))}-${Math.max(...sizes)} B stored ` +
      `(the last ${raw} B of JSON before deflate), frames named up to ${Math.max(...distinct)}; ` +
      `snapshot p50 ${[...snapshotMs].sort((x, y) => x - y)[snapshotMs.length >> 1]!.toFixed(2)} ms, ` +
      `max ${Math.max(...snapshotMs.slice(10)).toFixed(2)} ms after the first 10 frames; ` +
      `restore ${restoreMs.toFixed(0)} ms with frames from memory`,
  );
  // A regression guard, not the figure (docs/moments.md, "Measured figures").
  assert.ok(Math.max(...sizes) <= 6144, `index step snapshot ${Math.max(...sizes)} B`);
  await again.close(true);
  await indexer.close(true);
});
