// Span export over OTLP/HTTP: a real sightflow with OTEL_EXPORTER_OTLP_ENDPOINT set sends its spans to a
// loopback server playing the collector (POST /v1/traces, OTLP JSON), which also plays the VLM and a webhook
// receiver and notes each call's traceparent. Checked: a request's SERVER span joins the caller's trace under
// the caller's span, with its route and status; an unsampled caller's trace is not sent; the calls a request
// makes and the worker's span of its video task hang under the request's span, so the exported trace has no
// gaps. (That nothing of OpenTelemetry loads without an endpoint is rule 7 of test/repo/house-rules.test.ts.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { h264Clip } from '../helpers/videos.js';
import { waitFor } from '../helpers/video-tasks.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
  status?: { code?: number; message?: string };
}
interface Exported {
  span: OtlpSpan;
  attrs: Record<string, string | number | boolean>;
  service: unknown;
}

const exported: Exported[] = [];
const exportHeaders: IncomingHttpHeaders[] = [];
const calls: Array<{ path: string; traceparent: string | undefined }> = [];
let t: TestApp;
let peer: Server;
let peerUrl: string;

const value = (v: OtlpValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue!));
const attrsOf = (list: OtlpSpan['attributes']) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));

before(async () => {
  peer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      if (url === '/v1/traces') {
        exportHeaders.push(req.headers);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) {
          const service = attrsOf(rs.resource?.attributes ?? [])['service.name'];
          for (const ss of rs.scopeSpans ?? [])
            for (const span of ss.spans ?? []) exported.push({ span, attrs: attrsOf(span.attributes ?? []), service });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      calls.push({ path: url, traceparent: req.headers.traceparent as string | undefined });
      if (url.startsWith('/v1/chat/completions')) {
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
  t = await startTestApp({
    OTEL_EXPORTER_OTLP_ENDPOINT: peerUrl,
    OTEL_SERVICE_NAME: 'sightflow-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=s3cret%20key',
    SIGHTFLOW_VLM_URL: `${peerUrl}/v1`,
    SIGHTFLOW_VLM_MODEL: 'tiny-vlm',
    SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS: '50',
  });
});
after(async () => {
  await t?.close();
  await new Promise((r) => peer?.close(r));
});

const traceparent = (traceId: string, parent: string, flags = '01') => `00-${traceId}-${parent}-${flags}`;
const parentOf = (tp: string | undefined) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(tp ?? '')?.[2];
const spanOf = (requestId: string) =>
  waitFor(
    `the span of ${requestId}`,
    async () => exported.find((e) => e.attrs['sightflow.request_id'] === requestId),
    10_000,
  );

test("a request is a SERVER span in its caller's trace, under the caller's span, named by its route", async () => {
  const r = await api(t, '/v1/project', {
    headers: { traceparent: traceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7') },
  });
  assert.equal(r.status, 200);
  const { span, attrs, service } = await spanOf(r.headers.get('x-request-id')!);
  assert.equal(span.name, 'GET /v1/project');
  assert.equal(span.kind, 2, 'SPAN_KIND_SERVER');
  assert.equal(span.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(span.parentSpanId, '00f067aa0ba902b7');
  assert.match(span.spanId, /^[0-9a-f]{16}$/);
  assert.notEqual(span.spanId, '00f067aa0ba902b7');
  assert.deepEqual(attrs, {
    'http.request.method': 'GET',
    'http.route': '/v1/project',
    'url.path': '/v1/project',
    'http.response.status_code': 200,
    'sightflow.request_id': r.headers.get('x-request-id'),
    'sightflow.project_id': t.projectId,
    'http.response.body.size': Buffer.byteLength(r.text),
  });
  assert.equal(service, 'sightflow-test');
  const start = Number(BigInt(span.startTimeUnixNano) / 1_000_000n);
  const end = Number(BigInt(span.endTimeUnixNano) / 1_000_000n);
  assert.ok(start <= end && end <= Date.now() && start > Date.now() - 60_000, `${start}..${end} is now`);
  assert.equal(span.status?.code ?? 0, 0, 'unset status');
  assert.equal(exportHeaders[0]!['x-collector-key'], 's3cret key', 'OTEL_EXPORTER_OTLP_HEADERS go with every export');
  assert.match(String(exportHeaders[0]!['content-type']), /^application\/json/);

  // A request that starts its trace is its root: the trace id is its log line's (the request id's hex).
  const own = await api(t, '/v1/project');
  const root = await spanOf(own.headers.get('x-request-id')!);
  assert.equal(root.span.traceId, own.headers.get('x-request-id')!.slice(4));
  assert.ok(!root.span.parentSpanId, 'no parent');

  // No route: named by the method alone, and a 404 is the client's error, not a failed span.
  const lost = await api(t, '/v1/no-such-route', { unchecked: true });
  assert.equal(lost.status, 404);
  const unrouted = await spanOf(lost.headers.get('x-request-id')!);
  assert.equal(unrouted.span.name, 'GET');
  assert.equal(unrouted.attrs['http.route'], undefined);
  assert.equal(unrouted.span.status?.code ?? 0, 0);

  // A caller that does not sample its trace gets no span; the request after it does.
  const unsampled = await api(t, '/v1/project', {
    headers: { traceparent: traceparent('5bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', '00') },
  });
  const next = await api(t, '/v1/project');
  await spanOf(next.headers.get('x-request-id')!);
  assert.equal(
    exported.find((e) => e.attrs['sightflow.request_id'] === unsampled.headers.get('x-request-id')),
    undefined,
  );
  assert.equal(
    exported.find((e) => e.span.traceId === '5bf92f3577b34da6a3ce929d0e0e4736'),
    undefined,
  );
});

test("the VLM call, a video task's worker span and its webhook hang under the request's span", {
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
    headers: { traceparent: traceparent('11111111111111111111111111111111', 'b7ad6b7169203331') },
  });
  assert.equal(d.status, 200, d.text);
  const describe = await spanOf(d.headers.get('x-request-id')!);
  assert.equal(describe.span.name, 'POST /v1/vision/describe');
  assert.equal(describe.span.parentSpanId, 'b7ad6b7169203331');
  const vlm = calls.find((c) => c.path.startsWith('/v1/chat/completions'));
  assert.ok(vlm, JSON.stringify(calls));
  assert.equal(parentOf(vlm.traceparent), describe.span.spanId, "the VLM call names the request's span as its parent");

  const trace = '22222222222222222222222222222222';
  const data = readFileSync(await h264Clip()).toString('base64');
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    headers: { traceparent: traceparent(trace, 'b7ad6b7169203331') },
    json: {
      input: [{ type: 'video_base64', data, max_frames: 2 }],
      steps: [{ model: 'feature' }],
      webhook: { url: `${peerUrl}/hook` },
    },
  });
  assert.equal(created.status, 202, created.text);
  const queued = await spanOf(created.headers.get('x-request-id')!);
  assert.equal(queued.span.name, 'POST /v1/video/process');
  const task = await waitFor(
    "the task's span",
    async () => exported.find((e) => e.attrs['sightflow.task_id'] === created.body.id),
    30_000,
  );
  assert.equal(task.span.name, 'video task');
  assert.equal(task.span.kind, 5, 'SPAN_KIND_CONSUMER');
  assert.equal(task.span.traceId, trace);
  assert.equal(
    task.span.parentSpanId,
    queued.span.spanId,
    "the worker's span is a child of the span that queued the task",
  );
  assert.notEqual(task.span.spanId, queued.span.spanId);
  assert.equal(task.attrs['sightflow.task.status'], 'succeeded');
  assert.equal(task.attrs['sightflow.task.frames'], 2);
  assert.equal(task.attrs['sightflow.project_id'], t.projectId);
  assert.ok(
    BigInt(task.span.startTimeUnixNano) >= BigInt(queued.span.startTimeUnixNano) &&
      BigInt(task.span.endTimeUnixNano) >= BigInt(task.span.startTimeUnixNano),
  );

  const hook = await waitFor('the webhook', async () => calls.find((c) => c.path === '/hook'), 30_000);
  assert.equal(parentOf(hook.traceparent), queued.span.spanId, 'the webhook names the span that queued the task');
  // Every parent in the trace is an exported span, but for the caller's own.
  const ids = new Set(exported.filter((e) => e.span.traceId === trace).map((e) => e.span.spanId));
  for (const e of exported.filter((x) => x.span.traceId === trace))
    assert.ok(e.span.parentSpanId === 'b7ad6b7169203331' || ids.has(e.span.parentSpanId!), e.span.name);
});
