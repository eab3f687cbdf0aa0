// The TypeScript SDK (clients/typescript) against a real server through the conformance proxy
// (clients/conformance): every case of clients/conformance/cases.json, named by its id.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, readFileSync } from 'node:fs';
import { startConformance, SAMPLE_IMAGE, type Conformance } from '../../clients/conformance/server.js';
import {
  Sightflow,
  OPERATIONS,
  BadRequestError,
  ConflictError,
  OverloadedError,
  WebhookVerificationError,
  type OperationId,
} from '../../clients/typescript/src/index.js';

let c: Conformance;
let client: Sightflow;
const video = (q = 'frames=3&frame_ms=1') => `http://127.0.0.1:9/clip.mp4?${q}`;

/** A synthetic detect task (`query` shapes it, see video()), run to its end through the SDK. */
async function finishedTask(query?: string) {
  const task = await client.tasks.create({
    input: [{ type: 'video_url', url: video(query) }],
    steps: [{ model: 'detect' }],
  });
  await client.tasks.wait(task.id, { pollInterval: 50, timeout: 30_000 });
  return task;
}

/** A task's archived stream as the server has it, read from the server directly (no proxy, no SDK). */
async function archiveOf(id: string): Promise<string> {
  const res = await fetch(`${c.upstream}/v1/video/tasks/${id}/stream`, {
    headers: { authorization: `Bearer ${c.key}` },
  });
  return Buffer.from(await res.arrayBuffer()).toString('utf8');
}

before(async () => {
  c = await startConformance();
  client = new Sightflow({ baseURL: c.url, apiKey: c.key, adminToken: c.adminToken });
});
after(async () => {
  await c?.close();
});
beforeEach(() => {
  c.proxy.reset();
});

test('retry_after_503: a 503 with Retry-After: 1 is retried after >= 1 s and succeeds', async () => {
  c.proxy.arm({ kind: 'status', method: 'GET', path: '/v1/project', status: 503, headers: { 'retry-after': '1' } });
  const started = performance.now();
  const project = await client.project();
  const elapsed = performance.now() - started;
  assert.ok(project.id, 'the retry answered the project');
  assert.ok(elapsed >= 1000, `retried after ${elapsed.toFixed(0)} ms, before Retry-After`);
  assert.equal(c.proxy.count('GET', '/v1/project'), 2);
  assert.equal(c.proxy.count('GET', '/v1/project', { forwarded: true }), 1);
});

test('no_retry_400: a 400 is sent once and raises BadRequestError with type, code, param and request id', async () => {
  const err = await client.vision.detect(c.imageUrl, { confidence_threshold: 7 }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof BadRequestError, String(err));
  assert.equal(err.status, 400);
  assert.equal(err.type, 'invalid_request_error');
  assert.equal(err.param, 'confidence_threshold');
  assert.ok(err.code.length > 0);
  assert.match(err.requestId ?? '', /\S/);
  assert.equal(c.proxy.count('POST', '/v1/vision/detect'), 1);
});

test('no_retry_409: cancelling a succeeded task is sent once and raises ConflictError', async () => {
  const task = await finishedTask();
  c.proxy.reset();
  const err = await client.tasks.cancel(task.id).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConflictError, String(err));
  assert.equal(err.type, 'conflict_error');
  assert.equal(c.proxy.count('POST', `/v1/video/tasks/${task.id}/cancel`), 1);
});

test('retries_bounded: three 503s spend the two default retries and raise OverloadedError', async () => {
  c.proxy.arm({
    kind: 'status',
    method: 'GET',
    path: '/v1/models',
    status: 503,
    headers: { 'retry-after': '0' },
    times: 3,
  });
  const err = await client.models.list().then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof OverloadedError, String(err));
  assert.equal(err.requestId, 'req_conformance');
  assert.equal(c.proxy.count('GET', '/v1/models'), 3);
});

test('idempotent_create_after_cut: a create cut after the server answered leaves exactly one task', async () => {
  // A project of its own, so that counting its tasks counts only this case's.
  const project = await client.call('admin.projects.create', { body: { name: 'idempotency-case' } });
  const { key } = await client.call('admin.projects.keys.create', { path: { id: project.id }, body: { name: 'k' } });
  const own = new Sightflow({ baseURL: c.url, apiKey: key });
  c.proxy.arm({ kind: 'cut_after_upstream', method: 'POST', path: '/v1/video/process' });
  const created = await own.tasks.create({
    input: [{ type: 'video_url', url: video() }],
    steps: [{ model: 'detect' }],
  });
  const posts = c.proxy.seen.filter((s) => s.method === 'POST' && s.path === '/v1/video/process');
  assert.equal(posts.length, 2, 'the cut request and one retry');
  assert.equal(posts[0]!.status, 202, 'the server answered the first attempt');
  assert.equal(posts[0]!.fault, 'cut_after_upstream');
  const all = await own.tasks.list().toArray();
  assert.deepEqual(
    all.map((t) => t.id),
    [created.id],
  );
});

test('stream_resume_cuts: a stream cut 5 times mid-event yields every chunk once, in order, to [DONE]', async () => {
  const task = await finishedTask('frames=30&frame_ms=1&targets=3');
  // The archive as it is, read from the server directly: its chunk ids and event boundaries.
  const archive = await archiveOf(task.id);
  const events = archive.split('\n\n').slice(0, -1);
  const boundaries = new Set<number>([0]);
  let at = 0;
  for (const e of events) {
    at += Buffer.byteLength(e) + 2;
    boundaries.add(at);
  }
  const ids = events.filter((e) => e.startsWith('data: {')).map((e) => (JSON.parse(e.slice(6)) as { id: string }).id);
  assert.ok(ids.length >= 30, `archive has ${ids.length} chunks`);
  assert.equal(events.at(-1), 'data: [DONE]');

  c.proxy.arm({
    kind: 'cut_stream',
    method: 'GET',
    path: `/v1/video/tasks/${task.id}/stream`,
    cuts: ['second', 'first', 'second', 'second', 'second'],
  });
  const stream = client.tasks.stream(task.id);
  const got: string[] = [];
  for await (const chunk of stream) got.push(chunk.id);
  assert.deepEqual(got, ids);
  assert.equal(c.proxy.cuts.length, 5);
  for (const cut of c.proxy.cuts) assert.ok(!boundaries.has(cut.cutAt), `cut at ${cut.cutAt} is an event boundary`);
  assert.equal(c.proxy.cuts[1]!.mode, 'first');
  assert.equal(stream.resumes, 5);
  assert.equal(stream.position(), Buffer.byteLength(archive));
});

test('list_45_by_20: 45 tasks listed 20 at a time iterate as 45 unique ids', async () => {
  const project = await client.call('admin.projects.create', { body: { name: 'list-case' } });
  const { key } = await client.call('admin.projects.keys.create', { path: { id: project.id }, body: { name: 'k' } });
  const own = new Sightflow({ baseURL: c.url, apiKey: key });
  const created = new Set<string>();
  for (let i = 0; i < 45; i++)
    created.add(
      (
        await own.tasks.create({
          input: [{ type: 'video_url', url: video('frames=1&frame_ms=0') }],
          steps: [{ model: 'detect' }],
        })
      ).id,
    );
  c.proxy.reset();
  const seen: string[] = [];
  for await (const t of own.tasks.list({ limit: 20 })) seen.push(t.id);
  assert.equal(seen.length, 45);
  assert.deepEqual(new Set(seen), created);
  assert.equal(c.proxy.count('GET', '/v1/video/tasks'), 3);
  const first = await own.tasks.list({ limit: 20 });
  assert.equal(first.data.length, 20);
  assert.equal(first.has_more, true);
});

test('every_operation: every operation of the document reaches the server through call()', async () => {
  const doc = (await (await fetch(`${c.upstream}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const documented = Object.values(doc.paths)
    .flatMap((ops) => Object.values(ops).map((o) => o.operationId))
    .sort();
  assert.deepEqual(Object.keys(OPERATIONS).sort(), documented, "the SDK knows exactly the document's operations");
  for (const id of documented as OperationId[]) {
    const spec = OPERATIONS[id];
    const params = Object.fromEntries(spec.pathParams.map((p) => [p, 'conformance-x']));
    c.proxy.reset();
    const out = await client.call(id, { path: params as never }, { maxRetries: 0, timeout: 10_000 }).then(
      (r) => r,
      (e: unknown) => e,
    );
    if (out instanceof Response) await out.body?.cancel();
    const path = spec.path.replace(/\{[A-Za-z_]+\}/g, 'conformance-x');
    assert.equal(c.proxy.count(spec.method, path), 1, `${id}: ${spec.method} ${path} reached the server once`);
    const e = out as { status?: number; code?: string };
    assert.notEqual(e.status, 405, `${id}: method not allowed`);
    assert.notEqual(e.code, 'route_not_found', `${id}: no route`);
  }
});

test("webhook_verify: the server's own delivery verifies; tampered and stale ones do not", async () => {
  const task = await client.tasks.create({
    input: [{ type: 'video_url', url: video() }],
    steps: [{ model: 'detect' }],
    webhook: { url: `${c.webhookUrl}/hook` },
  });
  const secret = (task as { webhook?: { secret?: string } }).webhook?.secret;
  assert.match(secret ?? '', /^whsec_/);
  const deadline = Date.now() + 30_000;
  while (!c.deliveries.some((d) => d.body.includes(task.id)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  const d = c.deliveries.find((x) => x.body.includes(task.id));
  assert.ok(d, 'the server delivered the webhook');
  const event = await client.webhooks.verify(d.headers, d.body, secret!);
  assert.equal(event.data.id, task.id);
  assert.equal(event.type, 'video.task.succeeded');
  const tampered = d.body.replace('succeeded', 'failed');
  await assert.rejects(client.webhooks.verify(d.headers, tampered, secret!), WebhookVerificationError);
  await assert.rejects(
    client.webhooks.verify(
      { ...d.headers, 'webhook-signature': 'v1,' + Buffer.alloc(32).toString('base64') },
      d.body,
      secret!,
    ),
    WebhookVerificationError,
  );
  const ts = Number(d.headers['webhook-timestamp']);
  await assert.rejects(client.webhooks.verify(d.headers, d.body, secret!, { now: ts + 301 }), WebhookVerificationError);
  await client.webhooks.verify(d.headers, d.body, secret!, { now: ts + 299 });
});

test('wait_terminal: wait returns the record once the task is terminal', async () => {
  const task = await client.tasks.process(video('frames=5&frame_ms=5'), { steps: [{ model: 'detect' }] });
  const seen: string[] = [];
  const done = await client.tasks.wait(task.id, {
    pollInterval: 20,
    timeout: 30_000,
    onProgress: (t) => seen.push(t.status),
  });
  assert.equal(done.status, 'succeeded');
  assert.equal(seen.at(-1), 'succeeded');
  const results = await client.tasks.results(task.id);
  assert.equal(results.id, task.id);
});

test('upload_bytes: detect takes a path, bytes and a stream as well as a URL, with the same answer', async () => {
  const byUrl = await client.vision.detect(c.imageUrl);
  assert.ok(byUrl.objects.length > 0);
  const byPath = await client.vision.detect(SAMPLE_IMAGE);
  const byBytes = await client.vision.detect(readFileSync(SAMPLE_IMAGE));
  const byBlob = await client.vision.detect(new Blob([readFileSync(SAMPLE_IMAGE)]));
  const byStream = await client.vision.detect(createReadStream(SAMPLE_IMAGE));
  for (const r of [byPath, byBytes, byBlob, byStream]) assert.deepEqual(r.objects, byUrl.objects);
  const withParams = await client.vision.detect(readFileSync(SAMPLE_IMAGE), {
    confidence_threshold: 0.99,
    classes: ['person'],
  });
  assert.ok(withParams.objects.every((o) => o.class === 'person' && o.confidence >= 0.99));
  // An item's image from a file, and a search by an image from bytes: the photo finds itself first.
  const col = await client.collections.create({ name: 'upload-case' } as never);
  const indexed = await client.collections.index(col.id, {
    items: [{ image: SAMPLE_IMAGE, metadata: { from: 'path' } }, { text: 'a bowl of soup' }],
  });
  const found = await client.collections.search(col.id, { image: readFileSync(SAMPLE_IMAGE), top_k: 1 });
  assert.equal(found.results?.[0]?.id, indexed.ids[0]);
});

test('paginate_any_list: any list operation pages through paginate()', async () => {
  const col = await client.collections.create({ name: 'paginate-case' } as never);
  const texts = ['one', 'two', 'three', 'four', 'five'];
  await client.collections.index(col.id, { items: texts.map((text) => ({ text })) } as never);
  c.proxy.reset();
  const ids: string[] = [];
  for await (const item of client.paginate<'vectors.collections.items.list', { id: string }>(
    'vectors.collections.items.list',
    { path: { id: col.id }, query: { limit: 2 } },
  ))
    ids.push(item.id);
  assert.equal(ids.length, 5);
  assert.equal(new Set(ids).size, 5);
  assert.equal(c.proxy.count('GET', `/v1/vectors/collections/${col.id}/items`), 3);
  const projects = await client.paginate('admin.projects.list').toArray();
  assert.ok(projects.length >= 1);
});

test('stream_live: the stream of a running task, cut twice mid-event, yields every chunk once to [DONE]', async () => {
  const task = await client.tasks.create({
    input: [{ type: 'video_url', url: video('frames=20&frame_ms=60') }],
    steps: [{ model: 'detect' }],
  });
  c.proxy.arm({
    kind: 'cut_stream',
    method: 'GET',
    path: `/v1/video/tasks/${task.id}/stream`,
    cuts: ['second', 'second'],
  });
  const got: string[] = [];
  let last: string | null = null;
  for await (const chunk of client.tasks.stream(task.id)) {
    got.push(chunk.id);
    last = chunk.finish_reason;
  }
  assert.equal((await client.tasks.get(task.id)).status, 'succeeded');
  assert.deepEqual(
    got,
    Array.from({ length: 21 }, (_, i) => `${task.id}.${i}`),
    'twenty frames and the terminal chunk',
  );
  assert.equal(last, 'stop');
  assert.equal(c.proxy.cuts.length, 2);
});

test('moment_replay: a moment replays the chunks from its offset up to its end', async () => {
  const task = await finishedTask('frames=12&frame_ms=1&walkers=1');
  const archive = await archiveOf(task.id);
  // Where chunk 4 begins, and the stream time of chunk 8: a moment of chunks 4-8.
  let offset = 0;
  const starts: number[] = [];
  const times: number[] = [];
  for (const e of archive.split('\n\n').slice(0, -1)) {
    if (e.startsWith('data: {')) {
      starts.push(offset);
      times.push((JSON.parse(e.slice(6)) as { stream_info: { stream_time_ms: number } }).stream_info.stream_time_ms);
    }
    offset += Buffer.byteLength(e) + 2;
  }
  const moment = { task_id: task.id, stream_offset: starts[4]!, end_ms: times[8]! };
  const got: string[] = [];
  for await (const chunk of client.moments.replay({ moment })) got.push(chunk.id);
  assert.deepEqual(
    got,
    [4, 5, 6, 7, 8].map((i) => `${task.id}.${i}`),
  );
});

test('stream_stall: a stream that goes silent mid-event is dropped after the timeout and resumed', async () => {
  const task = await finishedTask('frames=6&frame_ms=1');
  c.proxy.arm({ kind: 'cut_stream', method: 'GET', path: `/v1/video/tasks/${task.id}/stream`, cuts: ['stall'] });
  const impatient = new Sightflow({ baseURL: c.url, apiKey: c.key, timeout: 1000 });
  const started = performance.now();
  const got: string[] = [];
  const stream = impatient.tasks.stream(task.id);
  for await (const chunk of stream) got.push(chunk.id);
  assert.deepEqual(
    got,
    Array.from({ length: 7 }, (_, i) => `${task.id}.${i}`),
  );
  assert.equal(stream.resumes, 1);
  assert.ok(performance.now() - started >= 1000, 'it waited out the silence');
});
