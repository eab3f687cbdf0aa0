// SIGHTFLOW_HTTP_FRONTS=2: `sightflow serve` starts two front processes on its port and listens only on loopback
// for them. The kernel spreads new connections over the two, so every check below sends its request on many
// fresh connections and asserts that whichever front took it, the answer is the one `serve` gives alone: detect's objects, its errors
// (from the front's own validation and from the owner's use case), the proxied routes (a JSON answer, a
// 3 MB request body, a 3 MB download, an event stream), usage rows and metrics in `serve`, one rate-limit bucket
// per key, spans in the caller's trace. A killed front is replaced, and SIGTERM stops the fronts and the server
// cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../helpers/cli.js';
import { projectRoot } from '../../src/base/paths.js';

const astronaut = readFileSync(join(projectRoot, 'assets', 'astronaut.jpg'));
/** Fresh connections per check: the chance that all of them land on one front is 2e-6. */
const SPREAD = 20;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a new connection (no keep-alive agent), so the kernel picks the process again. */
function once(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts).toString() }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The same request SPREAD times; every answer must equal the first (the request id aside). */
async function sameEverywhere(send: () => Promise<Answer>): Promise<Answer> {
  const all = [];
  for (let i = 0; i < SPREAD; i++) all.push(await send());
  const shape = (a: Answer) => `${a.status} ${a.headers['content-type']} ${a.body}`;
  for (const a of all) assert.equal(shape(a), shape(all[0]!));
  return all[0]!;
}

test('front processes answer as serve does: detect, errors, proxied routes, usage, metrics, restart, stop', {
  timeout: 180_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-fronts-'));
  try {
    const s = await serve(['--data-dir', dataDir], {
      SIGHTFLOW_HTTP_FRONTS: '2',
      SIGHTFLOW_ADMIN_TOKEN: 'adm',
      SIGHTFLOW_METRICS_PORT: '0',
    });
    const fronts = () =>
      s.lines.filter((l) => l.includes('"front process listening"')).map((l) => (JSON.parse(l) as { pid: number }).pid);
    assert.equal(fronts().length, 2, 'two fronts listened before serve said it listens');
    const key = /sk_sf_[A-Za-z0-9_-]{43}/.exec(s.lines.find((l) => /sk_sf_/.test(l))!)![0];
    const auth = { authorization: `Bearer ${key}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const detectBody = JSON.stringify({ image_base64: astronaut.toString('base64') });

    // Detect: the same objects from every process, JSON base64 and a raw upload alike.
    const det = await sameEverywhere(() => once(s.port, 'POST', '/v1/vision/detect', json, detectBody));
    assert.equal(det.status, 200, det.body);
    assert.ok((JSON.parse(det.body) as { objects: unknown[] }).objects.length > 0);
    const raw = await sameEverywhere(() =>
      once(s.port, 'POST', '/v1/vision/detect', { ...auth, 'content-type': 'image/jpeg' }, astronaut),
    );
    assert.equal(raw.body, det.body);
    const detectLines = () =>
      s.lines.filter((l) => l.includes('"route":"/v1/vision/detect"') && l.includes('"status":200'));
    // A front's log lines leave its buffer a moment after the answers.
    for (let i = 0; i < 100 && detectLines().length < 2 * SPREAD; i++) await new Promise((r) => setTimeout(r, 50));
    const servedBy = detectLines().map((l) => (JSON.parse(l) as { front?: number }).front);
    assert.equal(servedBy.length, 2 * SPREAD, 'every detect logged once');
    assert.deepEqual(new Set(servedBy), new Set(fronts()), 'both fronts answered detects, and only they');

    // Errors, whoever answers: the front's own (auth, validation, base64, media type, method) and the owner's.
    const errs: Array<[string, () => Promise<Answer>, number]> = [
      [
        'no key',
        () => once(s.port, 'POST', '/v1/vision/detect', { 'content-type': 'application/json' }, detectBody),
        401,
      ],
      ['bad base64', () => once(s.port, 'POST', '/v1/vision/detect', json, '{"image_base64":"!!!"}'), 400],
      [
        'unknown field',
        () => once(s.port, 'POST', '/v1/vision/detect', json, '{"image_base64":"x","confidence":1}'),
        400,
      ],
      ['bad JSON', () => once(s.port, 'POST', '/v1/vision/detect', json, '{"image_'), 400],
      [
        'media type',
        () => once(s.port, 'POST', '/v1/vision/detect', { ...auth, 'content-type': 'text/plain' }, 'x'),
        400,
      ],
      ['method', () => once(s.port, 'GET', '/v1/vision/detect', auth), 405],
      [
        'unknown class (the owner)',
        () =>
          once(
            s.port,
            'POST',
            '/v1/vision/detect',
            json,
            JSON.stringify({ image_base64: astronaut.toString('base64'), classes: ['unicorn'] }),
          ),
        400,
      ],
      [
        'malformed base64 (decoded in the front)',
        () => once(s.port, 'POST', '/v1/vision/detect', json, '{"image_base64":"data:image/jpeg;base64,%%%"}'),
        400,
      ],
      [
        'not an image (the owner)',
        () => once(s.port, 'POST', '/v1/vision/detect', json, '{"image_base64":"aGVsbG8="}'),
        400,
      ],
    ];
    for (const [what, send, status] of errs) {
      const a = await sameEverywhere(send);
      assert.equal(a.status, status, `${what}: ${a.body}`);
      assert.ok((JSON.parse(a.body) as { error?: { code?: string } }).error?.code, `${what}: the error shape`);
    }

    // Proxied routes: a JSON answer, an admin call with a body, a 3 MB body read whole, a 3 MB download, an event stream.
    const models = await sameEverywhere(() => once(s.port, 'GET', '/v1/models', auth));
    assert.equal(models.status, 200);
    const projects = JSON.parse(
      (await once(s.port, 'GET', '/admin/v1/projects', { authorization: 'Bearer adm' })).body,
    ) as {
      data: Array<{ id: string; name: string }>;
    };
    const projectId = projects.data.find((p) => p.name === 'default')!.id;
    const big = JSON.stringify({ input: 'x'.repeat(3 * 1024 * 1024) });
    const bigAsk = await sameEverywhere(() => once(s.port, 'POST', '/v1/video/process', json, big));
    // The whole 3 MB body went through to serve, whose validation names the string's length, not its bytes.
    assert.equal(bigAsk.status, 400, bigAsk.body.slice(0, 300));
    assert.match(bigAsk.body, /but received a string of 3145728 characters/);
    // A 3 MB download (over the front's 1 MiB buffering, streamed against its Content-Length): a staged upload.
    const video = Buffer.from('sightflow '.repeat(300 * 1024));
    const task = await once(
      s.port,
      'POST',
      '/v1/video/process',
      json,
      JSON.stringify({
        input: [{ type: 'video_base64', data: video.toString('base64') }],
        steps: [{ model: 'detect' }],
      }),
    );
    assert.equal(task.status, 202, task.body.slice(0, 300));
    const taskId = (JSON.parse(task.body) as { id: string }).id;
    const link = (
      JSON.parse((await once(s.port, 'GET', `/v1/video/tasks/${taskId}`, auth)).body) as { input_url: string }
    ).input_url;
    const download = await sameEverywhere(() => once(s.port, 'GET', link));
    assert.equal(download.status, 200);
    assert.equal(download.headers['content-length'], String(video.length), 'its length kept');
    assert.ok(download.body === video.toString(), `${download.body.length} of ${video.length} bytes, the same`);
    for (let i = 0; i < SPREAD; i++) {
      const first = await new Promise<string>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: s.port,
            path: '/mcp',
            headers: { ...auth, accept: 'text/event-stream' },
            agent: false,
          },
          (res) => {
            assert.equal(res.statusCode, 200);
            assert.match(String(res.headers['content-type']), /text\/event-stream/);
            let text = '';
            res.on('data', (c: Buffer) => {
              text += c;
              if (text.includes('\n\n')) {
                req.destroy();
                resolve(text);
              }
            });
          },
        );
        req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
        req.end();
      });
      assert.match(first, /event: endpoint/);
    }

    // Usage rows and metrics are serve's: every answered detect is one row and one count.
    const answered = 2 * SPREAD;
    const usage = JSON.parse(
      (await once(s.port, 'GET', `/admin/v1/projects/${projectId}/usage`, { authorization: 'Bearer adm' })).body,
    ) as { data: Array<{ requests: number }> };
    const rows = usage.data.reduce((n, d) => n + d.requests, 0);
    assert.equal(rows, answered, `one usage row per answered detect: ${JSON.stringify(usage)}`);
    const metricsPort = (JSON.parse(s.lines.find((l) => l.includes('"metrics listening"'))!) as { metricsPort: number })
      .metricsPort;
    await new Promise((r) => setTimeout(r, 300)); // the fronts hand their counts over every 100 ms
    const metrics = (await once(metricsPort, 'GET', '/metrics')).body;
    const counted = metrics
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('sightflow_http_requests_total{') &&
          l.includes('route="/v1/vision/detect"') &&
          l.includes('status="200"'),
      )
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    assert.equal(counted, answered, "every detect counted once in serve's metrics");

    // A front killed is replaced; requests go on meanwhile.
    const [victim] = fronts();
    process.kill(victim!, 'SIGKILL');
    const deadline = Date.now() + 60_000;
    while (fronts().length < 3 && Date.now() < deadline) {
      const a = await once(s.port, 'POST', '/v1/vision/detect', json, detectBody).catch(() => null);
      if (a) assert.equal(a.status, 200);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(fronts().length, 3, 'a new front listened');
    assert.ok(s.lines.some((l) => l.includes('front process died')));

    // SIGTERM: the fronts drain and exit, then serve.
    const live = fronts().filter((p) => p !== victim);
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0, s.stderr());
    for (const pid of live) assert.throws(() => process.kill(pid, 0), 'the front exited');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a key has one rate-limit bucket, however many processes answer it', { timeout: 120_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-fronts-rate-'));
  try {
    // Three requests, then a refill so slow that none comes back during the test.
    const s = await serve(['--data-dir', dataDir], {
      SIGHTFLOW_HTTP_FRONTS: '2',
      SIGHTFLOW_RATE_LIMIT_RPS: '0.0001',
      SIGHTFLOW_RATE_LIMIT_BURST: '3',
    });
    const key = /sk_sf_[A-Za-z0-9_-]{43}/.exec(s.lines.find((l) => /sk_sf_/.test(l))!)![0];
    const json = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ image_base64: astronaut.toString('base64') });
    // Two requests a front refuses itself (bad JSON, a wrong method) take from the bucket, as serve alone takes
    // before it reads a body. (The front hands them over as it answers; the pause keeps the next request, on
    // another connection and maybe another front, from overtaking that message.)
    assert.equal((await once(s.port, 'POST', '/v1/vision/detect', json, '{"image_')).status, 400);
    assert.equal((await once(s.port, 'GET', '/v1/vision/detect', json)).status, 405);
    await new Promise((r) => setTimeout(r, 200));
    const statuses: number[] = [];
    for (let i = 0; i < SPREAD; i++)
      statuses.push((await once(s.port, 'POST', '/v1/vision/detect', json, body)).status);
    assert.deepEqual(statuses.filter((x) => x === 200).length, 1, `one answer, then 429s: ${statuses.join(' ')}`);
    assert.ok(
      statuses.every((x) => x === 200 || x === 429),
      statuses.join(' '),
    );
    // Once a client has seen `serve` refuse the key, every front knows (`serve` sends that 429 once each has
    // said it heard): a request a front would refuse itself (bad JSON) is now answered 429 with Retry-After, as
    // `serve` alone answers it (the bucket before the body). No pause: nothing here may depend on timing.
    for (let i = 0; i < SPREAD; i++) {
      const a = await once(s.port, 'POST', '/v1/vision/detect', json, '{"image_');
      assert.equal(a.status, 429, a.body);
      assert.equal(JSON.parse(a.body).error.code, 'rate_limit_exceeded');
      assert.ok(Number(a.headers['retry-after']) > 9000, String(a.headers['retry-after']));
    }
    // A front that replaces one that died hears of the empty bucket before it listens.
    const fronts = () => s.lines.filter((l) => l.includes('"front process listening"')).length;
    process.kill(
      (JSON.parse(s.lines.find((l) => l.includes('"front process listening"'))!) as { pid: number }).pid,
      'SIGKILL',
    );
    const deadline = Date.now() + 60_000;
    while (fronts() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(fronts(), 3, 'a new front listened');
    for (let i = 0; i < SPREAD; i++)
      assert.equal((await once(s.port, 'POST', '/v1/vision/detect', json, '{"image_')).status, 429);
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0, s.stderr());
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("with an OTLP endpoint, a request a front answers is a SERVER span in its caller's trace, and the owner's calls hang under it", {
  timeout: 120_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-fronts-spans-'));
  // One loopback server plays the collector (OTLP JSON) and the VLM, noting each VLM call's traceparent.
  const spans: Array<{
    name: string;
    traceId: string;
    spanId: string;
    parentSpanId?: string;
    start: number;
    end: number;
    requestId: string;
  }> = [];
  const vlmParents: string[] = [];
  const peer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, any>> }> }>;
        };
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const sp of ss.spans ?? [])
              spans.push({
                name: sp.name,
                traceId: sp.traceId,
                spanId: sp.spanId,
                parentSpanId: sp.parentSpanId || undefined,
                start: Number(BigInt(sp.startTimeUnixNano) / 1_000_000n),
                end: Number(BigInt(sp.endTimeUnixNano) / 1_000_000n),
                requestId: (sp.attributes as Array<{ key: string; value: { stringValue?: string } }>).find(
                  (a) => a.key === 'sightflow.request_id',
                )?.value.stringValue as string,
              });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      vlmParents.push(/^00-[0-9a-f]{32}-([0-9a-f]{16})-01$/.exec(String(req.headers.traceparent))?.[1] ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          model: 'tiny-vlm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'An astronaut.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 90, completion_tokens: 3 },
        }),
      );
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  const peerUrl = `http://127.0.0.1:${(peer.address() as { port: number }).port}`;
  try {
    const s = await serve(['--data-dir', dataDir], {
      SIGHTFLOW_HTTP_FRONTS: '2',
      OTEL_EXPORTER_OTLP_ENDPOINT: peerUrl,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      SIGHTFLOW_VLM_URL: `${peerUrl}/v1`,
      SIGHTFLOW_VLM_MODEL: 'tiny-vlm',
    });
    const key = /sk_sf_[A-Za-z0-9_-]{43}/.exec(s.lines.find((l) => /sk_sf_/.test(l))!)![0];
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      traceparent: `00-${trace}-00f067aa0ba902b7-01`,
    };
    const body = JSON.stringify({ image_base64: astronaut.toString('base64') });
    const sent: Array<{ route: string; requestId: string; from: number; to: number }> = [];
    for (let i = 0; i < SPREAD; i++)
      for (const [route, path] of [
        ['POST /v1/vision/describe', '/v1/vision/describe'],
        ['GET /v1/project', '/v1/project'],
      ] as const) {
        const from = Date.now();
        const a = await once(
          s.port,
          path.endsWith('describe') ? 'POST' : 'GET',
          path,
          headers,
          path.endsWith('describe') ? body : undefined,
        );
        assert.equal(a.status, 200, a.body);
        sent.push({ route, requestId: String(a.headers['x-request-id']), from, to: Date.now() });
      }
    const deadline = Date.now() + 15_000;
    while (sent.some((x) => !spans.some((sp) => sp.requestId === x.requestId)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    for (const x of sent) {
      const sp = spans.filter((y) => y.requestId === x.requestId);
      assert.equal(sp.length, 1, `one span for ${x.route} ${x.requestId}`);
      assert.equal(sp[0]!.name, x.route);
      assert.equal(sp[0]!.traceId, trace);
      assert.equal(sp[0]!.parentSpanId, '00f067aa0ba902b7', "under the caller's span");
      // The front's clock moved to the owner's: the span lies inside the request as the client saw it.
      assert.ok(
        sp[0]!.start >= x.from - 5 && sp[0]!.end <= x.to + 5,
        `${sp[0]!.start}..${sp[0]!.end} in ${x.from}..${x.to}`,
      );
    }
    const described = sent
      .filter((x) => x.route.endsWith('describe'))
      .map((x) => spans.find((y) => y.requestId === x.requestId)!.spanId);
    assert.equal(new Set(described).size, SPREAD, 'span ids unique across the fronts');
    assert.deepEqual(new Set(vlmParents), new Set(described), "each VLM call names its request's span as its parent");
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0, s.stderr());
  } finally {
    await new Promise((r) => peer.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  }
});
