// Video tasks on a host with several GPUs: each task's decoder asks for the card with the fewest decoders open,
// keeps it for the task, and gives it back at the end. Here no card opens, so each decoder falls back to
// software and names the device it asked for, which is what shows the choice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { LocalProvider } from '../../src/video/worker/local-provider.js';
import { DecoderDevices } from '../../src/video/worker/decoder-devices.js';
import type { FrameModels } from '../../src/video/pipeline/frame-step.js';
import type { VideoTaskRequest } from '../../src/video/task-contract.js';
import { h264Clip } from '../helpers/videos.js';

const noModels = new Proxy({} as FrameModels, {
  get: () => () => Promise.reject(new Error('a feature step needs no model')),
});

test('concurrent tasks ask for the cards in turn and give them back', async () => {
  const lines: Array<{ msg: string; device?: number | null; fallback?: string | null; hwaccel?: string }> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    }),
  );
  const devices = new DecoderDevices([0, 200]);
  const provider = new LocalProvider({
    allowPrivateUrls: false,
    models: noModels,
    services: { log },
    hwaccel: 'cuda',
    decoderDevices: devices,
  });
  const clip = await h264Clip();
  const request: VideoTaskRequest = {
    input: [{ type: 'video_url', sampling: { mode: 'fps', value: 2 }, max_frames: 6 }],
    steps: [{ model: 'feature' }],
  };
  // Both decoders are open at once: the second task's frames wait until the first has taken its card.
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let opened = 0;
  const run = (id: string) =>
    provider.run(
      request,
      { path: clip },
      {
        taskId: id,
        projectId: 'p',
        signal: new AbortController().signal,
        emit: async () => {
          if (++opened === 2) release();
          await held;
          return true;
        },
      },
    );
  const results = await Promise.all([run('vt_a'), run('vt_b')]);
  for (const r of results) assert.ok(r.usage.processed_frames >= 1);
  const opens = lines.filter((l) => l.msg === 'video decoder opened');
  assert.equal(opens.length, 2, JSON.stringify(lines));
  for (const o of opens) {
    assert.equal(o.hwaccel, 'software');
    assert.equal(o.device, null);
  }
  assert.deepEqual(
    opens.map((o) => /no CUDA device (\d+)/.exec(o.fallback ?? '')?.[1]).sort(),
    ['0', '200'],
    'one task asked for each card',
  );
  assert.deepEqual(devices.counts(), { 0: 0, 200: 0 }, 'both given back');
});
