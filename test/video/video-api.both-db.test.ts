// /v1/video/* without a worker: validation (whole error bodies), the task record, include=request, results
// before success, list filters and keyset pagination across 250 tasks, project isolation, and the SSRF
// policy on video URLs. Runs on PGlite and PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, type TestApp } from '../helpers/app.js';
import { body, createTask, startVideoApp, warmKey } from '../helpers/video-tasks.js';

let t: TestApp;
before(async () => {
  t = await startVideoApp();
});
after(async () => {
  await t?.close();
});

const invalid = (code: string, message: string, param: string | null) => ({
  error: { type: 'invalid_request_error', code, message, param },
});
const post = (json: unknown) => api(t, '/v1/video/process', { method: 'POST', json });

test('POST /v1/video/process -> 202 {id, status, stream_url}; the record; include=request; results 404 until succeeded', async () => {
  const r = await post(body('http://127.0.0.1:9/clip.mp4', { model: 'edge', tracker: { type: 'sort', max_age: 10 } }));
  assert.equal(r.status, 202);
  assert.deepEqual(Object.keys(r.body).sort(), ['id', 'status', 'stream_url']);
  assert.match(r.body.id, /^vt_[a-z0-9]{20}$/);
  assert.equal(r.body.status, 'pending');
  assert.equal(r.body.stream_url, `/v1/video/tasks/${r.body.id}/stream`);
  const g = await api(t, `/v1/video/tasks/${r.body.id}`);
  assert.equal(g.status, 200);
  const { created_at, ...rest } = g.body;
  assert.ok(!Number.isNaN(Date.parse(created_at)));
  assert.deepEqual(rest, {
    id: r.body.id,
    object: 'video.task',
    status: 'pending',
    started_at: null,
    finished_at: null,
    model: 'edge',
    stream_url: r.body.stream_url,
    progress: {
      frame_index: null,
      decoded_frames: 0,
      dropped_frames: 0,
      total_frames: null,
      processed_frames: 0,
      processed_fps: null,
    },
    usage: null,
    error: null,
    attempts: 0,
    resumes: 0,
  });
  const withReq = await api(t, `/v1/video/tasks/${r.body.id}?include=request`);
  assert.deepEqual(
    withReq.body.request,
    body('http://127.0.0.1:9/clip.mp4', { model: 'edge', tracker: { type: 'sort', max_age: 10 } }),
  );
  const badInclude = await api(t, `/v1/video/tasks/${r.body.id}?include=everything`);
  assert.deepEqual(
    badInclude.body,
    invalid(
      'invalid_parameter',
      'Expected a comma list of "request", "webhook_deliveries" for include but received "everything"',
      'include',
    ),
  );
  const res = await api(t, `/v1/video/tasks/${r.body.id}/results`);
  assert.equal(res.status, 404);
  assert.deepEqual(res.body, {
    error: {
      type: 'not_found_error',
      code: 'results_not_ready',
      message: `Results of video task ${r.body.id} are available once it has succeeded; it is pending`,
      param: null,
    },
  });
  const none = await api(t, '/v1/video/tasks/vt_doesnotexist');
  assert.deepEqual(none.body, {
    error: { type: 'not_found_error', code: 'not_found', message: 'No such video task: vt_doesnotexist', param: null },
  });
  assert.equal((await api(t, '/v1/video/tasks/vt_doesnotexist/results')).status, 404);
  assert.equal((await api(t, '/v1/video/tasks/vt_doesnotexist/stream')).status, 404);
});

test('video_base64 is staged to the blob store before the task exists; include=request elides the data to its length', async () => {
  const bytes = Buffer.alloc(1000, 7);
  const r = await post({
    input: [{ type: 'video_base64', data: `data:video/mp4;base64,${bytes.toString('base64')}` }],
    steps: [{ model: 'detect' }],
  });
  assert.equal(r.status, 202, r.text);
  const g = await api(t, `/v1/video/tasks/${r.body.id}?include=request`);
  assert.deepEqual(g.body.request, {
    input: [{ type: 'video_base64', data: { elided: true, bytes: 1000 } }],
    steps: [{ model: 'detect' }],
  });
  const staged = await t.app.services.blobs.read(`video-inputs/${t.projectId}/${r.body.id}`);
  assert.ok(staged.equals(bytes));
  const big = await post({
    input: [{ type: 'video_base64', data: Buffer.alloc(20 * 1024 * 1024 + 1).toString('base64') }],
    steps: [{ model: 'detect' }],
  });
  assert.equal(big.status, 413);
  assert.deepEqual(big.body, {
    error: {
      type: 'invalid_request_error',
      code: 'payload_too_large',
      message: 'The video is larger than the limit of 20971520 bytes',
      param: null,
    },
  });
  const bare = await post({
    input: [{ type: 'video_base64', data: bytes.toString('base64') }],
    steps: [{ model: 'ocr' }],
  });
  assert.equal(bare.status, 202);
  assert.equal((await api(t, `/v1/video/tasks/${bare.body.id}`)).body.model, 'ocr');
});

test('bad input -> documented 400s (whole bodies)', async () => {
  const url = 'http://127.0.0.1:9/clip.mp4';
  const cases: Array<[string, unknown, ReturnType<typeof invalid>]> = [
    [
      'two input elements',
      {
        input: [
          { type: 'video_url', url },
          { type: 'video_url', url },
        ],
        steps: [{ model: 'detect' }],
      },
      invalid(
        'invalid_request',
        'Invalid body field input: Expected exactly one input element (v1) but received 2',
        'input',
      ),
    ],
    [
      'no input element',
      { input: [], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input: Expected exactly one input element (v1) but received 0',
        'input',
      ),
    ],
    [
      'missing url',
      { input: [{ type: 'video_url' }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].url: Expected an http(s) or rtsp(s) URL for url when type is video_url but received nothing',
        'input[0].url',
      ),
    ],
    [
      'non-http url',
      { input: [{ type: 'video_url', url: 'file:///etc/passwd' }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].url: Expected an http(s) or rtsp(s) URL for url but received "file:///etc/passwd"',
        'input[0].url',
      ),
    ],
    [
      'missing data',
      { input: [{ type: 'video_base64' }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].data: Expected a base64 string or data URI for data when type is video_base64 but received nothing',
        'input[0].data',
      ),
    ],
    [
      'bad base64',
      { input: [{ type: 'video_base64', data: 'not base64 at all!' }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_base64',
        'Expected input[0].data to be a data URI or base64 string but it could not be decoded',
        'input[0].data',
      ),
    ],
    [
      'unknown input type',
      { input: [{ type: 'video_file', url }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].type: Expected "video_url" or "video_base64" for type but received "video_file"',
        'input[0].type',
      ),
    ],
    [
      'unknown step model',
      { input: [{ type: 'video_url', url }], steps: [{ model: 'segment' }] },
      invalid(
        'invalid_request',
        'Invalid body field steps[0].model: Expected one of detect, ocr, feature, analytics, index for model but received "segment"',
        'steps[0].model',
      ),
    ],
    [
      'unknown step parameter',
      { input: [{ type: 'video_url', url }], steps: [{ model: 'detect', parameters: { language: 'en' } }] },
      invalid(
        'invalid_request',
        'Invalid body field steps[0].parameters.language: Unknown field "language"',
        'steps[0].parameters.language',
      ),
    ],
    [
      'no steps',
      { input: [{ type: 'video_url', url }], steps: [] },
      invalid(
        'invalid_request',
        'Invalid body field steps: Expected at least one step for steps but received an array',
        'steps',
      ),
    ],
    [
      'sampling value 0',
      { input: [{ type: 'video_url', url, sampling: { mode: 'fps', value: 0 } }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].sampling.value: Expected a number greater than 0 for sampling.value but received 0',
        'input[0].sampling.value',
      ),
    ],
    [
      'sampling value < 0',
      { input: [{ type: 'video_url', url, sampling: { mode: 'interval', value: -2 } }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].sampling.value: Expected a number greater than 0 for sampling.value but received -2',
        'input[0].sampling.value',
      ),
    ],
    [
      'range end < start',
      { input: [{ type: 'video_url', url, range: { start: 5, end: 2 } }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].range.end: Expected range.end greater than range.start (5) but received 2',
        'input[0].range.end',
      ),
    ],
    [
      'max_frames 0',
      { input: [{ type: 'video_url', url, max_frames: 0 }], steps: [{ model: 'detect' }] },
      invalid(
        'invalid_request',
        'Invalid body field input[0].max_frames: Expected an integer >= 1 for max_frames but received 0',
        'input[0].max_frames',
      ),
    ],
    [
      'confidence over 1',
      { input: [{ type: 'video_url', url }], steps: [{ model: 'detect', parameters: { confidence_threshold: 1.5 } }] },
      invalid(
        'invalid_request',
        'Invalid body field steps[0].parameters.confidence_threshold: Expected a number between 0 and 1 for parameters.confidence_threshold but received 1.5',
        'steps[0].parameters.confidence_threshold',
      ),
    ],
    [
      'unknown top-level field',
      { input: [{ type: 'video_url', url }], steps: [{ model: 'detect' }], callback: 'x' },
      invalid('invalid_request', 'Invalid body field callback: Unknown field "callback"', 'callback'),
    ],
    [
      'bad tracker type',
      { input: [{ type: 'video_url', url }], steps: [{ model: 'detect' }], tracker: { type: 'deepsort' } },
      invalid(
        'invalid_request',
        'Invalid body field tracker.type: Expected "sort" or "bytetrack" for tracker.type but received "deepsort"',
        'tracker.type',
      ),
    ],
  ];
  for (const [name, json, expected] of cases) {
    const r = await post(json);
    assert.equal(r.status, 400, `${name}: ${r.text}`);
    assert.deepEqual(r.body, expected, name);
    assert.ok(r.headers.get('x-request-id'), `${name}: x-request-id`);
  }
  const list = await api(t, '/v1/video/tasks?limit=100');
  assert.ok(list.body.data.length <= 3, 'no rejected request created a task');
});

test('list: status filter, from/to, cursor pagination across 250 tasks with no gaps or duplicates; other project never appears', async () => {
  // A second project with tasks of its own.
  const other = await t.app.services.projects.create('video-other');
  const otherKey = (await t.app.services.projects.createKey(other.id, 'k')).key;
  await warmKey(t, otherKey);
  const foreign = await api(t, '/v1/video/process', { method: 'POST', json: body(), key: otherKey });
  assert.equal(foreign.status, 202);
  assert.equal((await api(t, `/v1/video/tasks/${foreign.body.id}`)).status, 404, "another project's id is 404");
  assert.equal((await api(t, `/v1/video/tasks/${foreign.body.id}/cancel`, { method: 'POST' })).status, 404);
  assert.equal((await api(t, `/v1/video/tasks/${foreign.body.id}/stream`)).status, 404);

  const before = (await api(t, '/v1/video/tasks?limit=100')).body.data.map((x: any) => x.id) as string[];
  await new Promise((r) => setTimeout(r, 20));
  const tFrom = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
  const ids: string[] = [];
  for (let i = 0; i < 250; i++) ids.push(await createTask(t));
  // Every fifth one cancelled (pending -> cancelled at once).
  const cancelled = new Set(ids.filter((_, i) => i % 5 === 0));
  for (const id of cancelled)
    assert.equal((await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' })).status, 202);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: any = await api(t, `/v1/video/tasks?limit=37${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.object, 'list');
    assert.ok(r.body.data.length <= 37);
    seen.push(...r.body.data.map((x: any) => x.id));
    cursor = r.body.next_cursor;
    assert.equal(r.body.has_more, cursor !== null);
    pages++;
  } while (cursor);
  const all = [...ids, ...before];
  assert.equal(seen.length, all.length, 'no gaps');
  assert.equal(new Set(seen).size, seen.length, 'no duplicates');
  assert.deepEqual(new Set(seen), new Set(all));
  assert.ok(!seen.includes(foreign.body.id), "other project's task never appears");
  assert.deepEqual(seen.slice(0, 250), [...ids].reverse(), 'newest first');
  assert.equal(pages, Math.ceil(all.length / 37));

  const c = await api(t, '/v1/video/tasks?status=cancelled&limit=100');
  assert.equal(c.body.data.length, 50);
  assert.ok(c.body.data.every((x: any) => x.status === 'cancelled' && cancelled.has(x.id)));
  const both = await api(t, '/v1/video/tasks?status=pending,cancelled&limit=100');
  assert.equal(both.body.data.length, 100);
  assert.equal(both.body.has_more, true);
  const p = await api(t, '/v1/video/tasks?status=pending&limit=1');
  assert.equal(p.body.data[0].id, ids[249]);

  // from/to: ISO 8601 and unix seconds; to is exclusive.
  const mid = (await api(t, `/v1/video/tasks/${ids[125]}`)).body.created_at as string;
  const older = await api(
    t,
    `/v1/video/tasks?limit=100&from=${encodeURIComponent(tFrom)}&to=${encodeURIComponent(mid)}`,
  );
  assert.ok(older.body.data.every((x: any) => x.created_at >= tFrom && x.created_at < mid));
  assert.ok(older.body.data.length > 0 && !older.body.data.some((x: any) => x.id === ids[125]));
  const future = Math.floor(Date.now() / 1000) + 3600;
  assert.equal((await api(t, `/v1/video/tasks?from=${future}`)).body.data.length, 0);
  assert.equal(
    (await api(t, `/v1/video/tasks?to=${Date.parse(tFrom) / 1000}&limit=100`)).body.data.length,
    before.length,
    'unix seconds (fractional)',
  );
  assert.equal(
    (await api(t, `/v1/video/tasks?from=${Date.parse(tFrom) / 1000}&limit=100&status=pending,cancelled`)).body.has_more,
    true,
  );

  const errs: Array<[string, ReturnType<typeof invalid>]> = [
    ['cursor=garbage', invalid('invalid_cursor', 'The cursor is not one this server issued', 'cursor')],
    [
      `cursor=${Buffer.from('["x","y"]').toString('base64url')}`,
      invalid('invalid_cursor', 'The cursor is not one this server issued', 'cursor'),
    ],
    [
      'status=done',
      invalid(
        'invalid_parameter',
        'Expected one of pending, running, streaming, succeeded, failed, cancelling, cancelled (or a comma list) for status but received "done"',
        'status',
      ),
    ],
    [
      'limit=0',
      invalid('invalid_parameter', 'Expected an integer between 1 and 100 for limit but received "0"', 'limit'),
    ],
    [
      'limit=101',
      invalid('invalid_parameter', 'Expected an integer between 1 and 100 for limit but received "101"', 'limit'),
    ],
    [
      'from=yesterday',
      invalid(
        'invalid_parameter',
        'Expected an ISO 8601 time or unix seconds for from but received "yesterday"',
        'from',
      ),
    ],
  ];
  for (const [q, expected] of errs) {
    const r = await api(t, `/v1/video/tasks?${q}`);
    assert.equal(r.status, 400, q);
    assert.deepEqual(r.body, expected, q);
  }
  const theirs = await api(t, '/v1/video/tasks?limit=100', { key: otherKey });
  assert.deepEqual(
    theirs.body.data.map((x: any) => x.id),
    [foreign.body.id],
  );
});

test('a video URL to a private address is refused unless SIGHTFLOW_ALLOW_PRIVATE_URLS=true', async () => {
  const strict = await startVideoApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'false' });
  try {
    const cases: Array<[string, string]> = [
      ['http://127.0.0.1:8080/a.mp4', '127.0.0.1 is loopback'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is link-local / metadata'],
      ['http://[::1]/a.mp4', '::1 is loopback'],
      ['http://localhost:9/a.mp4', 'localhost resolves to '],
    ];
    for (const [url, why] of cases) {
      const r = await api(strict, '/v1/video/process', { method: 'POST', json: body(url) });
      assert.equal(r.status, 400, url);
      assert.equal(r.body.error.type, 'invalid_request_error');
      assert.equal(r.body.error.code, 'url_not_allowed');
      assert.equal(r.body.error.param, 'input[0].url');
      assert.ok(
        r.body.error.message.startsWith(
          `The URL points to a private, loopback or link-local address, which is not allowed: ${why}`,
        ),
        r.body.error.message,
      );
    }
    assert.deepEqual(
      (await api(strict, '/v1/video/process', { method: 'POST', json: body('http://10.1.2.3/a.mp4') })).body,
      invalid(
        'url_not_allowed',
        'The URL points to a private, loopback or link-local address, which is not allowed: 10.1.2.3 is private',
        'input[0].url',
      ),
    );
    // A host that does not resolve cannot be checked, so it is refused at submit too, as for image URLs.
    const unresolved = await api(strict, '/v1/video/process', {
      method: 'POST',
      json: body('http://no-such-host.invalid/a.mp4'),
    });
    assert.equal(unresolved.status, 400);
    assert.deepEqual(
      unresolved.body,
      invalid(
        'image_fetch_failed',
        'The video URL could not be fetched: could not resolve host no-such-host.invalid',
        'input[0].url',
      ),
    );
    assert.equal((await api(strict, '/v1/video/tasks')).body.data.length, 0);
  } finally {
    await strict.close();
  }
});
