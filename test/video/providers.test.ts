// Provider lists (SIGHTFLOW_PROVIDERS) and RemoteProvider against small HTTP servers that speak the sightflow
// video API wire format (POST /v1/video/process -> 202, GET stream -> SSE chunks built with the real
// src/video/stream/chunks.ts, GET results), one that answers 500, and ones that drop or stall: the failover inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { frameEvent, terminalEvents } from '../../src/video/stream/chunks.js';
import { createProviders } from '../../src/video/worker/provider-lists.js';
import { hintVariable, parseProviderList } from '../../src/config/providers.js';
import { LocalProvider } from '../../src/video/worker/local-provider.js';
import { RemoteProvider } from '../../src/video/worker/remote-provider.js';
import {
  ProviderError,
  type FrameOutput,
  type ProviderResult,
  type VideoProvider,
  type VideoTaskRequest,
} from '../../src/video/task-contract.js';
import { mediaDir } from '../helpers/media.js';

const KEY = 'sk_sf_remote_test_key';

function frame(i: number): FrameOutput {
  return {
    stream_info: {
      frame_index: i * 25,
      total_frames: 250,
      decoded_frames: i * 25 + 1,
      dropped_frames: i * 24,
      fps: 25,
      elapsed_ms: 10 * i,
    },
    delta: {
      results: [
        {
          index: 0,
          targets: [{ track_id: 1, class: 'person', confidence: 0.9, roi: { left: i, top: 2, width: 30, height: 60 } }],
        },
      ],
    },
  };
}

interface Fake {
  url: string;
  posts: Array<{ auth: string | undefined; body: any }>;
  streamRequests: Array<{ offset: string | null; lastEventId: string | undefined }>;
  cancels: number;
  close(): Promise<void>;
}

/**
 * A sightflow node that runs every task as `frames` frames. `mode`: 'ok'; 'http500' (create fails);
 * 'drop' (the first stream connection is cut after two frames; a resume gets the rest from its offset);
 * 'error' (a terminal error chunk after one frame); 'stall' (202, then a stream that never sends a frame).
 */
async function fakeNode(mode: 'ok' | 'http500' | 'drop' | 'error' | 'stall', frames = 4): Promise<Fake> {
  const id = 'vt_remote1';
  const whole = (() => {
    let s = '';
    for (let i = 0; i < frames; i++) s += frameEvent(id, i, frame(i), 'remote-model');
    const last = frame(frames - 1).stream_info;
    if (mode === 'error')
      return (
        frameEvent(id, 0, frame(0), 'm') +
        terminalEvents(
          id,
          1,
          'error',
          frame(0).stream_info,
          { processed_frames: 1, processing_time_ms: 5, decoded_frames: 1, dropped_frames: 0 },
          'm',
          { code: 'invalid_video', message: 'broken input' },
        )
      );
    return (
      s +
      ': hb\n\n' +
      terminalEvents(
        id,
        frames,
        'stop',
        last,
        { processed_frames: frames, processing_time_ms: 40, decoded_frames: 250, dropped_frames: 246 },
        'remote-model',
      )
    );
  })();
  const bytes = Buffer.from(whole);
  const f: Fake = { url: '', posts: [], streamRequests: [], cancels: 0, close: async () => {} };
  let streamCalls = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://x');
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${KEY}`)
        return void res.writeHead(401).end('{"error":{"message":"bad key"}}');
      if (req.method === 'POST' && u.pathname === '/v1/video/process') {
        f.posts.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        if (mode === 'http500')
          return void res
            .writeHead(500, { 'content-type': 'application/json' })
            .end('{"error":{"type":"api_error","code":"internal_error","message":"boom"}}');
        return void res
          .writeHead(202, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id, status: 'pending', stream_url: `/v1/video/tasks/${id}/stream` }));
      }
      if (req.method === 'GET' && u.pathname === `/v1/video/tasks/${id}/stream`) {
        f.streamRequests.push({
          offset: u.searchParams.get('offset'),
          lastEventId: req.headers['last-event-id'] as string | undefined,
        });
        const offset = Number(u.searchParams.get('offset') ?? req.headers['last-event-id'] ?? 0);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-stream-offset': String(offset) });
        if (mode === 'stall') return void res.write(': hb\n\n');
        streamCalls++;
        if (mode === 'drop' && streamCalls === 1) {
          // Two whole events and half of the third, then the connection dies.
          let cut = 0;
          for (let k = 0; k < 2; k++) cut = bytes.indexOf('\n\n', cut) + 2;
          res.write(bytes.subarray(0, cut + 10));
          return void setTimeout(() => res.socket?.destroy(), 50);
        }
        return void res.end(bytes.subarray(offset));
      }
      if (req.method === 'GET' && u.pathname === `/v1/video/tasks/${id}/results`) {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id,
            object: 'mm.pipeline.result',
            model: 'remote-model',
            usage: { processed_frames: frames, processing_time_ms: 40 },
            tracks: [
              {
                track_id: 1,
                class: 'person',
                first_frame: 0,
                last_frame: (frames - 1) * 25,
                frames_seen: frames,
                best_confidence: 0.9,
                feature_digest: 'dim=160;norm=0.9876',
              },
            ],
          }),
        );
      }
      if (req.method === 'POST' && u.pathname === `/v1/video/tasks/${id}/cancel`) {
        f.cancels++;
        return void res.writeHead(202).end('{}');
      }
      res.writeHead(404).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  f.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  f.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return f;
}

const request: VideoTaskRequest = {
  input: [
    { type: 'video_url', url: 'https://videos.example/a.mp4', sampling: { mode: 'fps', value: 1 }, max_frames: 100 },
  ],
  steps: [{ model: 'detect', parameters: { classes: ['person'] } }],
  model: 'gpu',
};

function ctx(signal = new AbortController().signal, keep: () => boolean = () => true) {
  const frames: FrameOutput[] = [];
  return {
    frames,
    ctx: {
      taskId: 'vt_local',
      projectId: 'p',
      signal,
      emit: async (f: FrameOutput) => {
        frames.push(f);
        return keep();
      },
    },
  };
}

/** What the worker does before the first chunk: try providers in order, at most 3 (2 retries). */
async function withFailover(
  providers: VideoProvider[],
  c: ReturnType<typeof ctx>['ctx'],
): Promise<{ result: ProviderResult; errors: string[] }> {
  const errors: string[] = [];
  for (const p of providers.slice(0, 3)) {
    try {
      return { result: await p.run(request, { url: request.input[0].url }, c), errors };
    } catch (e) {
      assert.ok(e instanceof ProviderError, `a provider failure is a ProviderError: ${String(e)}`);
      errors.push(`${p.name}: ${e.message}`);
    }
  }
  throw new Error(`all failed: ${errors.join('; ')}`);
}

test('parseProviderList: comma and JSON forms, keys, errors that name the variable', () => {
  assert.deepEqual(parseProviderList('local'), [{ type: 'local' }]);
  assert.deepEqual(parseProviderList(' local , https://gpu-2:8080/#sk_sf_abc '), [
    { type: 'local' },
    { type: 'remote', url: 'https://gpu-2:8080', key: 'sk_sf_abc' },
  ]);
  assert.deepEqual(
    parseProviderList('[{"url":"http://a:1","key":"k","timeout_ms":500,"name":"a"},"local",{"type":"local"}]'),
    [{ type: 'remote', url: 'http://a:1', key: 'k', name: 'a', timeoutMs: 500 }, { type: 'local' }, { type: 'local' }],
  );
  assert.throws(() => parseProviderList('https://gpu-2:8080'), /SIGHTFLOW_PROVIDERS: .*no API key/);
  assert.throws(
    () => parseProviderList('gpu-2', 'SIGHTFLOW_PROVIDERS_X'),
    /SIGHTFLOW_PROVIDERS_X: .*neither "local" nor/,
  );
  assert.throws(() => parseProviderList('[{"url":1}]'), /SIGHTFLOW_PROVIDERS\[0\]/);
  assert.throws(() => parseProviderList(' , '), /empty/);
  assert.equal(hintVariable('gpu-fast.v2'), 'SIGHTFLOW_PROVIDERS_GPU_FAST_V2');
});

test('createProviders: default [local]; the model hint picks its own list; unknown hints use the default', () => {
  const s = {
    config: loadConfig({}),
    models: {
      detector: async () => {
        throw new Error('not needed');
      },
    },
  } as never;
  const plain = createProviders(s, loadConfig({}).providers);
  assert.deepEqual(
    plain.forModel().map((p) => p.name),
    ['local'],
  );
  assert.ok(plain.forModel('anything')[0] instanceof LocalProvider);
  const routed = createProviders(
    s,
    loadConfig({
      SIGHTFLOW_PROVIDERS: 'local,http://gpu-1:8080#k1',
      SIGHTFLOW_PROVIDERS_GPU: 'http://gpu-2:8080#k2,local',
    }).providers,
  );
  assert.deepEqual(
    routed.forModel().map((p) => p.name),
    ['local', 'remote:http://gpu-1:8080'],
  );
  assert.deepEqual(
    routed.forModel('gpu').map((p) => p.name),
    ['remote:http://gpu-2:8080', 'local'],
  );
  assert.deepEqual(
    routed.forModel('cpu').map((p) => p.name),
    ['local', 'remote:http://gpu-1:8080'],
  );
  assert.throws(
    () => loadConfig({ SIGHTFLOW_PROVIDERS_BAD: 'nope' }),
    /invalid configuration: SIGHTFLOW_PROVIDERS_BAD/,
  );
});

test('RemoteProvider re-emits the remote frames in order and returns its track summary', async () => {
  const node = await fakeNode('ok', 4);
  try {
    const { frames, ctx: c } = ctx();
    const r = await new RemoteProvider({ url: node.url, key: KEY }).run(request, { url: request.input[0].url }, c);
    assert.deepEqual(frames, [0, 1, 2, 3].map(frame));
    assert.equal(r.finish_reason, 'stop');
    assert.equal(r.usage.processed_frames, 4);
    assert.equal(r.stream_info.frame_index, 75);
    assert.equal(r.tracks[0].feature_digest, 'dim=160;norm=0.9876');
    const sent = node.posts[0].body;
    assert.equal(sent.model, undefined, 'the routing hint is not forwarded');
    assert.deepEqual(sent.input, [
      { type: 'video_url', url: 'https://videos.example/a.mp4', sampling: { mode: 'fps', value: 1 }, max_frames: 100 },
    ]);
    assert.deepEqual(sent.steps, request.steps);
  } finally {
    await node.close();
  }
});

test('RemoteProvider sends a staged upload as video_base64', async () => {
  const node = await fakeNode('ok', 1);
  const path = join(mediaDir(), 'staged.bin');
  writeFileSync(path, Buffer.from('not really a video'));
  try {
    await new RemoteProvider({ url: node.url, key: KEY }).run(
      { ...request, input: [{ type: 'video_base64', url: path }] },
      { path },
      ctx().ctx,
    );
    assert.deepEqual(node.posts[0].body.input, [
      { type: 'video_base64', data: Buffer.from('not really a video').toString('base64') },
    ]);
  } finally {
    await node.close();
  }
});

test('failover: provider 1 answers 500 -> ProviderError before any frame; provider 2 succeeds with no duplicates', async () => {
  const bad = await fakeNode('http500');
  const good = await fakeNode('ok', 3);
  try {
    const { frames, ctx: c } = ctx();
    const { result, errors } = await withFailover(
      [new RemoteProvider({ url: bad.url, key: KEY }), new RemoteProvider({ url: good.url, key: KEY })],
      c,
    );
    assert.equal(errors.length, 1);
    assert.match(errors[0], /HTTP 500: boom/);
    assert.deepEqual(frames, [0, 1, 2].map(frame));
    assert.equal(result.finish_reason, 'stop');
    // The status travels with the error (the worker logs it).
    await assert.rejects(
      new RemoteProvider({ url: bad.url, key: KEY }).run(request, { url: 'https://v/a.mp4' }, ctx().ctx),
      (e: unknown) => e instanceof ProviderError && e.status === 500,
    );
    // A wrong key is a 401 from the node: also a provider failure.
    await assert.rejects(
      new RemoteProvider({ url: good.url, key: 'wrong' }).run(request, { url: 'https://v/a.mp4' }, ctx().ctx),
      (e: unknown) => e instanceof ProviderError && e.status === 401,
    );
    // Nothing listening at all.
    await bad.close();
    await assert.rejects(
      new RemoteProvider({ url: bad.url, key: KEY }).run(request, { url: 'https://v/a.mp4' }, ctx().ctx),
      (e: unknown) => e instanceof ProviderError,
    );
  } finally {
    await good.close();
  }
});

test('a dropped stream resumes at its byte offset: every frame exactly once', async () => {
  const node = await fakeNode('drop', 4);
  try {
    const { frames, ctx: c } = ctx();
    const r = await new RemoteProvider({ url: node.url, key: KEY }).run(request, { url: 'https://v/a.mp4' }, c);
    assert.deepEqual(frames, [0, 1, 2, 3].map(frame));
    assert.equal(r.finish_reason, 'stop');
    assert.equal(node.streamRequests.length, 2);
    assert.equal(node.streamRequests[0].offset, null);
    const offset = Number(node.streamRequests[1].offset);
    assert.ok(offset > 0 && String(offset) === node.streamRequests[1].lastEventId);
  } finally {
    await node.close();
  }
});

test('a remote terminal error chunk is a ProviderError carrying its message', async () => {
  const node = await fakeNode('error');
  try {
    const { frames, ctx: c } = ctx();
    await assert.rejects(
      new RemoteProvider({ url: node.url, key: KEY }).run(request, { url: 'https://v/a.mp4' }, c),
      (e: unknown) => e instanceof ProviderError && /ended with error: broken input/.test(e.message),
    );
    assert.equal(frames.length, 1);
  } finally {
    await node.close();
  }
});

test('no first frame within the timeout -> ProviderError, and the remote task is cancelled', async () => {
  const node = await fakeNode('stall');
  try {
    const started = performance.now();
    await assert.rejects(
      new RemoteProvider({ url: node.url, key: KEY, firstFrameTimeoutMs: 300 }).run(
        request,
        { url: 'https://v/a.mp4' },
        ctx().ctx,
      ),
      (e: unknown) => e instanceof ProviderError && /No frame .* within 300 ms/.test(e.message),
    );
    assert.ok(performance.now() - started < 10_000);
    for (let i = 0; i < 50 && node.cancels === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(node.cancels, 1);
  } finally {
    await node.close();
  }
});

test('cancel: the abort signal ends the run with an AbortError and cancels the remote task', async () => {
  const node = await fakeNode('stall');
  try {
    const ac = new AbortController();
    const p = new RemoteProvider({ url: node.url, key: KEY }).run(
      request,
      { url: 'https://v/a.mp4' },
      ctx(ac.signal).ctx,
    );
    setTimeout(() => ac.abort(), 200);
    await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
    for (let i = 0; i < 50 && node.cancels === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(node.cancels, 1);
  } finally {
    await node.close();
  }
});
