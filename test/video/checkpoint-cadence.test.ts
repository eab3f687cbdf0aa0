// When a file task's chunks store a checkpoint (CheckpointCadence), and how a continued task's frames processed
// again stand in for themselves (CatchUp): the archived output comes back, another frame index fails the task
// resume_mismatch, other targets are counted. The whole path runs in test/video/video-resume-file.both-db.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CatchUp, CheckpointCadence } from '../../src/video/worker/checkpoint-cadence.js';
import { ProviderError, type FrameOutput } from '../../src/video/task-contract.js';

const due = (c: CheckpointCadence, n: number) =>
  Array.from({ length: n }, () => {
    const d = c.due();
    c.archived(d);
    return d ? 1 : 0;
  }).join('');

test('a checkpoint with the first chunk and every 5th after it; every chunk when the time is spent', () => {
  assert.equal(due(new CheckpointCadence(5, 3_600_000), 12), '100001000010');
  assert.equal(due(new CheckpointCadence(1, 3_600_000), 4), '1111');
  assert.equal(due(new CheckpointCadence(5, 0), 4), '1111');
  // A continued task 3 chunks past its checkpoint stores one with its 2nd new chunk.
  assert.equal(due(new CheckpointCadence(5, 3_600_000, 3), 8), '01000010');
});

const frame = (index: number, box = 10, extra: Partial<FrameOutput> = {}): FrameOutput => ({
  stream_info: {
    frame_index: index,
    total_frames: 9,
    decoded_frames: index + 1,
    dropped_frames: 0,
    fps: 10,
    elapsed_ms: 5,
  },
  delta: {
    results: [
      {
        index: 0,
        targets: [{ track_id: 1, class: 'person', confidence: 0.9, roi: { left: box, top: 0, width: 5, height: 5 } }],
      },
    ],
  },
  ...extra,
});

test('frames processed again get the archived output back; another index is resume_mismatch', () => {
  const c = new CatchUp(2);
  const analytics = { events: [{ id: 'e1' }], totals: {} };
  for (const i of [0, 1, 2, 3]) c.add(frame(i, 10, i === 3 ? { analytics } : {}));
  assert.equal(c.pending, 2);
  const made = frame(2, 10, { frame_size: { width: 64, height: 48 } });
  const out = c.take(made);
  assert.notEqual(out, made);
  assert.deepEqual(out.frame_size, { width: 64, height: 48 });
  assert.ok(c.gave(out) && !c.gave(made));
  // The tracking gave another box than the archive: counted, the archived output stands.
  const again = c.take(frame(3, 11));
  assert.deepEqual(again.analytics, analytics);
  assert.equal(again.delta.results[0]!.targets[0]!.roi.left, 10);
  assert.equal(c.differing, 1);
  assert.equal(c.pending, 0);

  const wrong = new CatchUp(0);
  wrong.add(frame(5));
  assert.throws(
    () => wrong.take(frame(6)),
    (e) => e instanceof ProviderError && e.code === 'resume_mismatch' && /frame 6 .* frame 5/.test(e.message),
  );
});
