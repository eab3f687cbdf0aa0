// The hostile-input sweep: seeded requests (requests.ts) to every operation of the server's /openapi.json,
// one at a time, each held to the contract: an answer within the per-request timeout on a connection that
// stays up, never a 5xx, every response as the document says (errors in the error shape), and a refused
// request (4xx) that changes nothing stored. The first failures are reported with the seed and the exact
// request; the counts by route and status class are the evidence of a clean run.
import { ContractViolation, checkResponse } from '../contract.js';
import { connect, type Connected } from '../mcp-clients.js';
import type { TestApp } from '../app.js';
import { describeRequest, generate, operations, type Fixtures, type FuzzRequest, type Operation } from './requests.js';
import type { Schema } from './schema-sample.js';
import { sql } from './stored-state.sql.js';
import { errorCatalogue, type CatalogueEntry } from '../../../src/base/errors.js';

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx' | 'failed';

export interface SweepOptions {
  seed: number;
  /** Stop after this many requests, or after `seconds`, whichever comes first. */
  requests?: number;
  seconds?: number;
  /** Per-request limit: no answer within it is a hang. */
  timeoutMs?: number;
  /** Stop at this many failures. */
  maxFailures?: number;
}

export interface SweepResult {
  seed: number;
  total: number;
  ms: number;
  byRoute: Record<string, Record<StatusClass, number>>;
  byClass: Record<StatusClass, number>;
  failures: string[];
}

interface Harness {
  f: Fixtures;
  mcp: Connected | null;
}

async function call(t: TestApp, method: string, path: string, auth: string, json?: unknown): Promise<any> {
  const r = await fetch(t.url + path, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`fixture ${method} ${path} -> ${r.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Real resources for path ids, so mutated requests reach past "not found"; re-made when the sweep deleted one. */
async function ensureFixtures(t: TestApp, h: Partial<Harness> & { f?: Fixtures }): Promise<Harness> {
  const f =
    h.f ??
    ({
      key: t.key,
      adminToken: t.adminToken,
      projectId: t.projectId,
      collectionId: '',
      itemId: 'it1',
      taskId: '',
      spareKeyId: '',
      mcpSession: '',
      tools: [],
    } as Fixtures);
  if (!f.spareKeyId)
    f.spareKeyId = (
      await call(t, 'POST', `/admin/v1/projects/${t.projectId}/keys`, t.adminToken, { name: 'fuzz-spare' })
    ).id;
  if (!f.taskId) {
    f.taskId = (
      await call(t, 'POST', '/v1/video/process', t.key, {
        input: [{ type: 'video_url', url: 'http://127.0.0.1:9/v.mp4' }],
        steps: [{ model: 'detect' }],
      })
    ).id;
  }
  const col = f.collectionId
    ? await fetch(`${t.url}/v1/vectors/collections/${f.collectionId}`, {
        headers: { authorization: `Bearer ${t.key}` },
      })
    : null;
  if (!col || col.status === 404) {
    await col?.text();
    f.collectionId = (
      await call(t, 'POST', '/v1/vectors/collections', t.key, { name: `fuzz-${Date.now()}-${Math.random()}` })
    ).id;
  } else await col.text();
  await call(t, 'POST', `/v1/vectors/collections/${f.collectionId}/index`, t.key, {
    items: [{ id: f.itemId, text: 'hello fuzz', metadata: { color: 'red', n: 1 } }],
  });
  let mcp = h.mcp ?? null;
  const alive = mcp
    ? await fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': f.mcpSession,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'alive', method: 'ping' }),
      }).then(async (r) => {
        await r.text();
        return r.status === 200;
      })
    : false;
  if (!alive) {
    await mcp?.close().catch(() => {});
    mcp = await connect(t, 'streamable-http');
    f.mcpSession = (mcp.transport as { sessionId?: string }).sessionId!;
    if (!f.tools.length)
      f.tools = (await mcp.client.listTools()).tools.map((x) => ({
        name: x.name,
        inputSchema: x.inputSchema as Schema,
      }));
  }
  return { f, mcp };
}

async function storedState(t: TestApp): Promise<string> {
  // Usage rows are written after the answer: settle those of earlier requests first.
  await t.app.services.usage.flush();
  return JSON.stringify(await t.app.services.db.query(sql.storedState));
}

/** An Error-shape body whose code is not in the catalogue, or is sent with another status or type. */
function catalogueMismatch(status: number, text: string): string | null {
  let body: { error?: { type?: string; code?: string } };
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  } // the contract check has judged the body already
  const e = body.error;
  if (!e || typeof e.code !== 'string') return null; // a JSON-RPC error from the MCP transport
  const entry = (errorCatalogue as Record<string, CatalogueEntry>)[e.code];
  if (!entry) return `error code ${e.code} is not in the catalogue`;
  if (entry.status !== status || entry.type !== e.type)
    return `error ${e.code} came as ${status} ${e.type}; the catalogue says ${entry.status} ${entry.type}`;
  return null;
}

/** Waits for /readyz (models load in the background): a 503 from it afterwards is a failure like any 5xx. */
async function ready(t: TestApp, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await fetch(`${t.url}/readyz`);
    const text = await r.text();
    if (r.status === 200) return;
    if (Date.now() > until) throw new Error(`the server was not ready within ${ms} ms: ${text}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

const routeKey = (op: Operation) => `${op.method} ${op.template}`;

/** Sends one request; what came back, or why nothing did. */
async function send(
  t: TestApp,
  q: FuzzRequest,
  timeoutMs: number,
): Promise<{ status: number; type: string | null; text: string } | { error: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(t.url + q.path, {
      method: q.method,
      headers: q.headers,
      body: typeof q.body === 'string' || q.body === undefined ? q.body : new Uint8Array(q.body),
      redirect: 'manual',
      signal,
    });
  } catch (e) {
    const err = e as Error & { cause?: Error };
    if (err.name === 'TimeoutError' || err.name === 'AbortError')
      return { error: `no answer within ${timeoutMs} ms (hang)` };
    if (err.message === 'fetch failed') return { error: `connection dropped: ${err.cause?.message ?? err.message}` };
    return { error: `not sent (${err.message})` };
  }
  const type = res.headers.get('content-type');
  // An event stream that opened is an answer; it runs on by design.
  if ((type ?? '').startsWith('text/event-stream') && res.status === 200) {
    await res.body?.cancel().catch(() => {});
    return { status: res.status, type, text: '' };
  }
  try {
    return { status: res.status, type, text: await res.text() };
  } catch (e) {
    return {
      error: signal.aborted
        ? `body not finished within ${timeoutMs} ms (hang)`
        : `connection dropped mid-body: ${(e as Error).message}`,
    };
  }
}

export async function sweep(t: TestApp, opts: SweepOptions): Promise<SweepResult> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxFailures = opts.maxFailures ?? 5;
  const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
    components?: { schemas?: Record<string, Schema> };
  };
  const ops = operations(doc);
  await ready(t, 120_000);
  let h = await ensureFixtures(t, {});
  const byRoute: SweepResult['byRoute'] = {};
  const byClass: Record<StatusClass, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, failed: 0 };
  for (const op of ops) byRoute[routeKey(op)] = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, failed: 0 };
  const failures: string[] = [];
  const until = opts.seconds !== undefined ? started + opts.seconds * 1000 : Infinity;
  const limit = opts.requests ?? Infinity;
  let n = 0;
  const fail = (q: FuzzRequest, why: string, answer?: string) => {
    failures.push(`${why}\n${describeRequest(opts.seed, q)}${answer ? `\nanswer: ${answer.slice(0, 1500)}` : ''}`);
  };
  try {
    for (; n < limit && Date.now() < until && failures.length < maxFailures; n++) {
      const q = generate(opts.seed, n, ops, h.f, doc.components?.schemas ?? {});
      const counts = byRoute[routeKey(q.op)]!;
      const mutating = q.method !== 'GET';
      const before = mutating ? await storedState(t) : '';
      const a = await send(t, q, timeoutMs);
      if ('error' in a) {
        if (a.error.startsWith('not sent')) {
          n--;
          continue;
        } // a header fetch refuses to send: nothing was tested
        counts.failed++;
        byClass.failed++;
        fail(q, a.error);
        continue;
      }
      const cls = `${Math.floor(a.status / 100)}xx` as StatusClass;
      counts[cls] = (counts[cls] ?? 0) + 1;
      byClass[cls] = (byClass[cls] ?? 0) + 1;
      if (a.status >= 500) {
        fail(q, `server error ${a.status}`, a.text);
        continue;
      }
      if (a.text || a.status >= 400) {
        try {
          checkResponse(t.app.server.router, q.method, q.path, a.status, a.type, a.text);
        } catch (e) {
          if (!(e instanceof ContractViolation)) throw e;
          fail(q, `response outside the documented contract: ${e.message}`, a.text);
          continue;
        }
      }
      const wrong = a.status >= 400 ? catalogueMismatch(a.status, a.text) : null;
      if (wrong) {
        fail(q, wrong, a.text);
        continue;
      }
      if (mutating && a.status >= 400) {
        const after = await storedState(t);
        if (after !== before)
          fail(q, `a refused request (${a.status}) changed what is stored:\nbefore ${before}\nafter  ${after}`, a.text);
      }
      // The sweep may have deleted a fixture (or ended its MCP session): make it again.
      if (mutating && a.status < 300 && (q.method === 'DELETE' || q.op.template.startsWith('/mcp')))
        h = await ensureFixtures(t, h);
    }
    // Healthy after: liveness, a database round trip, an authenticated read.
    for (const [path, auth] of [
      ['/healthz', null],
      ['/readyz', null],
      ['/v1/project', t.key],
    ] as const) {
      const r = await fetch(t.url + path, {
        headers: auth ? { authorization: `Bearer ${auth}` } : {},
        signal: AbortSignal.timeout(timeoutMs),
      }).catch((e: Error) => e);
      if (r instanceof Error || r.status !== 200)
        failures.push(`after the sweep, GET ${path} answered ${r instanceof Error ? r.message : r.status}`);
      else await r.text();
    }
  } finally {
    await h.mcp?.close().catch(() => {});
  }
  return { seed: opts.seed, total: n, ms: Date.now() - started, byRoute, byClass, failures };
}

/** The counts as lines: one per route, then the totals. */
export function formatCounts(r: SweepResult): string {
  const cell = (c: Record<StatusClass, number>) =>
    (['2xx', '3xx', '4xx', '5xx', 'failed'] as const).map((k) => `${k}=${c[k] ?? 0}`).join(' ');
  const lines = Object.entries(r.byRoute).map(
    ([k, c]) => `  ${k.padEnd(58)} ${String(Object.values(c).reduce((a, b) => a + b, 0)).padStart(5)}  ${cell(c)}`,
  );
  return [`seed ${r.seed}: ${r.total} requests in ${(r.ms / 1000).toFixed(1)} s; ${cell(r.byClass)}`, ...lines].join(
    '\n',
  );
}
