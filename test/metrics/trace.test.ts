// Request traces (W3C Trace Context): a request's `traceparent` is accepted, or a trace is started, and its
// trace id is in the request's access-log line; describe's call to the VLM and a video task's webhook (across
// the queue, through the worker that ran the task) carry the same trace with a span id of their own; a
// malformed traceparent starts a new trace instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { h264Clip } from '../helpers/videos.js';
import { waitFor } from '../helpers/video-tasks.js';

const lines: Array<Record<string, unknown>> = [];
const seen: Array<{ path: string; traceparent: string | undefined }> = [];
let t: TestApp;
let peer: Server;
let peerUrl: string;

before(async () => {
  // One loopback server plays the VLM (an OpenAI-style answer) and the webhook receiver; it notes each
  // request's traceparent.
  peer = createServer((req, res) => {
    seen.push({ path: req.url ?? '', traceparent: req.headers.traceparent as string | undefined });
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/v1/chat/completions')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            model: 'tiny-vlm',
            choices: [
              { index: 0, message: { role: 'assistant', content: 'An orange square.' }, finish_reason: 'stop' },
            ],
            usage: { prompt_tokens: 90, completion_tokens: 4 },
          }),
        );
      } else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  peerUrl = `http://127.0.0.1:${(peer.address() as { port: number }).port}`;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  t = await startTestApp(
    { SIGHTFLOW_VLM_URL: `${peerUrl}/v1`, SIGHTFLOW_VLM_MODEL: 'tiny-vlm', SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS: '50' },
    { log: pino({ level: 'info' }, sink) },
  );
});
after(async () => {
  await t?.close();
  await new Promise((r) => peer?.close(r));
});

const trace = (id: string, span = 'b7ad6b7169203331') => `00-${id}-${span}-01`;
const accessLine = async (requestId: string) =>
  waitFor(
    `the log line of ${requestId}`,
    async () => lines.find((l) => l.msg === 'request' && l.requestId === requestId),
    5000,
  );
const parts = (tp: string | undefined) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(tp ?? '');

test("a request's traceparent is its log line's trace_id; without one (or with a malformed one) a trace starts", async () => {
  const joined = await api(t, '/v1/project', { headers: { traceparent: trace('4bf92f3577b34da6a3ce929d0e0e4736') } });
  assert.equal((await accessLine(joined.headers.get('x-request-id')!)).trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');

  const started = await api(t, '/v1/project');
  const own = (await accessLine(started.headers.get('x-request-id')!)).trace_id as string;
  assert.match(own, /^[0-9a-f]{32}$/);
  const other = await api(t, '/v1/project');
  assert.notEqual(
    (await accessLine(other.headers.get('x-request-id')!)).trace_id,
    own,
    'each request starts its own trace',
  );

  for (const bad of [
    trace('0'.repeat(32)),
    trace('4bf92f3577b34da6a3ce929d0e0e4736', '0'.repeat(16)),
    `ff-${'1'.repeat(32)}-${'2'.repeat(16)}-01`,
    '00-XYZ',
    `${trace('4bf92f3577b34da6a3ce929d0e0e4736')}-extra`,
  ]) {
    const r = await api(t, '/v1/project', { headers: { traceparent: bad } });
    assert.equal(r.status, 200);
    const id = (await accessLine(r.headers.get('x-request-id')!)).trace_id as string;
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.notEqual(id, '4bf92f3577b34da6a3ce929d0e0e4736', bad);
  }
  // A client's own request id keeps its trace too.
  const named = await api(t, '/v1/project', {
    headers: { 'x-request-id': 'client-42', traceparent: trace('0af7651916cd43dd8448eb211c80319c') },
  });
  assert.equal((await accessLine('client-42')).trace_id, '0af7651916cd43dd8448eb211c80319c');
  assert.equal(named.status, 200);
});

test("the VLM call and a video task's webhook carry the request's trace with their own span", {
  timeout: 60_000,
}, async () => {
  const image_base64 = (
    await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 250, g: 140, b: 0 } } })
      .png()
      .toBuffer()
  ).toString('base64');
  const d = await api(t, '/v1/vision/describe', {
    method: 'POST',
    json: { image_base64 },
    headers: { traceparent: trace('11111111111111111111111111111111') },
  });
  assert.equal(d.status, 200, d.text);
  const vlmCall = parts(seen.find((s) => s.path.startsWith('/v1/chat/completions'))?.traceparent);
  assert.ok(vlmCall, JSON.stringify(seen));
  assert.equal(vlmCall[1], '11111111111111111111111111111111');
  assert.notEqual(vlmCall[2], 'b7ad6b7169203331', 'the call is a span of its own');

  const data = readFileSync(await h264Clip()).toString('base64');
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    headers: { traceparent: trace('22222222222222222222222222222222') },
    json: {
      input: [{ type: 'video_base64', data, max_frames: 2 }],
      steps: [{ model: 'feature' }],
      webhook: { url: `${peerUrl}/hook` },
    },
  });
  assert.equal(created.status, 202, created.text);
  const hook = await waitFor('the webhook', async () => seen.find((s) => s.path === '/hook'), 30_000);
  const call = parts(hook.traceparent);
  assert.ok(call, JSON.stringify(hook));
  assert.equal(call[1], '22222222222222222222222222222222');
  assert.notEqual(call[2], 'b7ad6b7169203331');
});
