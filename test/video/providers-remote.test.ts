// RemoteProvider against a real second sightflow node (test harness server with its in-process worker): the
// task is created there, its SSE chunks are re-emitted here in order, and a dead first provider fails over.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RemoteProvider } from '../../src/video/worker/remote-provider.js';
import { ProviderError, type FrameOutput, type VideoTaskRequest } from '../../src/video/task-contract.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { h264Clip } from '../helpers/videos.js';

let node: TestApp;
let files: Server;
let clipUrl: string;
let clip: string;

before(async () => {
  node = await startTestApp();
  clip = await h264Clip();
  const size = statSync(clip).size;
  files = createServer((req, res) => {
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    res.writeHead(m ? 206 : 200, {
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
      ...(m ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
    });
    createReadStream(clip, { start, end }).pipe(res);
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  clipUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/clip.mp4`;
});
after(async () => {
  files?.close();
  await node?.close();
});

const request = (url?: string): VideoTaskRequest => ({
  input: [{ type: 'video_url', url, max_frames: 3 }],
  steps: [{ model: 'feature' }],
  model: 'routed',
});

function collect() {
  const frames: FrameOutput[] = [];
  return {
    frames,
    ctx: {
      taskId: 'vt_here',
      projectId: 'p',
      signal: new AbortController().signal,
      emit: async (f: FrameOutput) => {
        frames.push(f);
        return true;
      },
    },
  };
}

test('a task on the remote node, by URL and as a staged upload: frames re-emitted in order', {
  timeout: 120_000,
}, async () => {
  const remote = new RemoteProvider({ url: node.url, key: node.key });
  for (const source of [{ url: clipUrl }, { path: clip }]) {
    const { frames, ctx } = collect();
    const r = await remote.run(request(source.url), source, ctx);
    assert.deepEqual(
      frames.map((f) => f.stream_info.frame_index),
      [0, 25, 50],
    );
    assert.equal(r.finish_reason, 'max_frames');
    assert.equal(r.usage.processed_frames, 3);
    assert.equal(frames[0].stream_info.total_frames, 250);
  }
});

test('failover to the real node after a dead provider and a wrong key', { timeout: 120_000 }, async () => {
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
  await new Promise<void>((r) => dead.close(() => r()));
  const providers = [
    new RemoteProvider({ url: deadUrl, key: 'k' }),
    new RemoteProvider({ url: node.url, key: 'sk_sf_wrong' }),
    new RemoteProvider({ url: node.url, key: node.key }),
  ];
  const { frames, ctx } = collect();
  const failures: ProviderError[] = [];
  let finish = '';
  for (const p of providers) {
    try {
      finish = (await p.run(request(clipUrl), { url: clipUrl }, ctx)).finish_reason;
      break;
    } catch (e) {
      assert.ok(e instanceof ProviderError, String(e));
      assert.equal(frames.length, 0, 'failed before any frame');
      failures.push(e);
    }
  }
  assert.equal(failures.length, 2);
  assert.equal(failures[1].status, 401);
  assert.equal(finish, 'max_frames');
  assert.deepEqual(
    frames.map((f) => f.stream_info.frame_index),
    [0, 25, 50],
  );
});
