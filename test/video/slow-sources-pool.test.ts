// Video tasks on slow HTTP sources must not take the server's shared thread pool: a decode waiting for bytes
// (which reach it from the JS side through the guarded network path) blocks the thread it runs on, and image
// decoding (sharp), file reads and DNS lookups all run on libuv's pool of 4 threads. Five tasks on a source
// that trickles a few bytes a second run at once while image requests and file reads are answered promptly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { h264Clip } from '../helpers/videos.js';
import { createTask, waitFor, waitStatus } from '../helpers/video-tasks.js';

const TASKS = 5;

let t: TestApp;
let server: Server;
let port = 0;
const open = new Set<ServerResponse>();
let requests = 0;
let clip: Buffer;
let photo: Buffer;

const detectPhoto = () =>
  api(t, '/v1/vision/detect', {
    method: 'POST',
    json: { image_base64: `data:image/jpeg;base64,${photo.toString('base64')}` },
  });

before(async () => {
  clip = readFileSync(await h264Clip());
  photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .jpeg()
    .toBuffer();
  // The whole clip is announced (Content-Length) but sent at 64 bytes every 200 ms: every open waits for bytes.
  server = createServer((_req, res) => {
    requests++;
    open.add(res);
    res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': String(clip.length) });
    let at = 0;
    const timer = setInterval(() => {
      if (at >= clip.length || res.destroyed) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(clip.subarray(at, at + 64));
      at += 64;
    }, 200);
    res.on('close', () => {
      clearInterval(timer);
      open.delete(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  t = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true', SIGHTFLOW_WORKER_CONCURRENCY: String(TASKS) });
  // The detection model loads in the background; the test measures requests, not the load.
  await waitFor('the detection model', async () => (await detectPhoto()).status === 200, 60_000);
});

after(async () => {
  for (const res of open) res.destroy();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await t?.close();
});

test(`image requests and file reads are served while ${TASKS} video tasks wait on slow sources`, {
  timeout: 120_000,
}, async () => {
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    ids.push(
      await createTask(t, {
        input: [
          { type: 'video_url', url: `http://127.0.0.1:${port}/clip-${i}.mp4`, sampling: { mode: 'fps', value: 1 } },
        ],
        steps: [{ model: 'detect' }],
      }),
    );
  }
  // Four decoders waiting on their sources would take every thread of libuv's default pool.
  const started = Date.now();
  await waitFor('four tasks to reach the slow source', async () => requests >= 4, 60_000);
  await new Promise((r) => setTimeout(r, 300));
  for (let round = 0; round < 3; round++) {
    const t0 = Date.now();
    const r = await detectPhoto();
    const ms = Date.now() - t0;
    assert.equal(r.status, 200, r.text);
    // Far below the decoders' 15 s open timeout, which is when a starved pool would free up.
    assert.ok(ms < 8000, `an image request took ${ms} ms while the video tasks waited`);
    const f0 = Date.now();
    await readFile(new URL(import.meta.url));
    assert.ok(Date.now() - f0 < 3000, `a file read took ${Date.now() - f0} ms while the video tasks waited`);
  }
  // Every task reached its source well inside the open timeout (a starved pool would start the fifth open
  // only when one of the first four timed out).
  await waitFor('all tasks to reach the slow source', async () => requests >= TASKS, 60_000);
  assert.ok(
    Date.now() - started < 10_000,
    `the ${TASKS} tasks reached their sources only after ${Date.now() - started} ms`,
  );
  for (const id of ids) {
    const task = await api(t, `/v1/video/tasks/${id}`);
    assert.equal(
      task.body.status,
      'running',
      `task ${id} is still waiting on its source: ${JSON.stringify(task.body.error)}`,
    );
  }
  for (const id of ids) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
  for (const id of ids) await waitStatus(t, id, ['cancelled', 'failed', 'succeeded'], 30_000);
});
