// Decoding a 1080p file happens on worker threads: the event loop stays responsive meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { VideoDecoder } from '../../src/video/source/decoder.js';
import { fullHdClip } from '../helpers/media.js';

test('event loop p99 delay stays under 20 ms while a 1080p file decodes', async (t) => {
  const clip = await fullHdClip(6);
  const h = monitorEventLoopDelay({ resolution: 1 });
  // Every frame sampled and converted to RGB (6 MB each): the heaviest per-frame work the decoder does.
  const d = await VideoDecoder.open(clip, { sampling: { mode: 'fps', value: 25 }, threads: 2 });
  h.enable();
  let frames = 0;
  let checksum = 0;
  for await (const f of d.frames(2, true)) {
    frames++;
    checksum += f.data[frames * 997];
  }
  h.disable();
  await d.close();
  assert.equal(frames, 150);
  assert.ok(checksum > 0);
  const p99 = h.percentile(99) / 1e6;
  t.diagnostic(`event loop p99 ${p99.toFixed(2)} ms, max ${(h.max / 1e6).toFixed(1)} ms over ${frames} frames`);
  // The monitor's own timer resolution (1 ms) is part of every sample.
  assert.ok(p99 < 20, `event loop p99 ${p99.toFixed(1)} ms (max ${(h.max / 1e6).toFixed(1)} ms)`);
});
