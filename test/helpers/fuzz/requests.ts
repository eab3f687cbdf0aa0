// Requests for the sweep, generated from the server's own OpenAPI document: for each operation a plausible
// request (path ids of real fixtures, documented query parameters, a body sampled from its schema), then
// mutated by a seeded random source: hostile values in any field, path segment, query parameter or header,
// bodies cut short or of the wrong type, the wrong credential. /mcp gets JSON-RPC messages (tool calls with
// arguments sampled from each tool's input schema) mutated the same way.
import { Random } from './random.js';
import { hostileString, hostileValue, mutate, NUL } from './hostile-values.js';
import { sample, type Schema } from './schema-sample.js';

export interface Operation {
  method: string;
  /** The path as the document writes it: /v1/vectors/collections/{id}. */
  template: string;
  auth: 'key' | 'admin' | 'none';
  query: Array<{ name: string; schema: Schema }>;
  headers: string[];
  /** Request body schemas by media type. */
  content: Record<string, Schema>;
}

export interface FuzzRequest {
  /** Number of the request in its seed's sequence. */
  n: number;
  op: Operation;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** What the generator knows of the server under test: credentials, fixture ids, tools. */
export interface Fixtures {
  key: string;
  adminToken: string;
  projectId: string;
  collectionId: string;
  itemId: string;
  taskId: string;
  /** A key the sweep may disable (never the one it uses). */
  spareKeyId: string;
  mcpSession: string;
  tools: Array<{ name: string; inputSchema: Schema }>;
}

export function operations(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    for (const [m, o] of Object.entries(ops)) {
      const sec = JSON.stringify(o.security ?? []);
      const params = (o.parameters ?? []) as Array<{
        in: string;
        name: string;
        schema?: Schema;
        content?: Record<string, { schema: Schema }>;
      }>;
      out.push({
        method: m.toUpperCase(),
        template,
        auth: sec.includes('adminToken') ? 'admin' : sec.includes('apiKey') ? 'key' : 'none',
        query: params
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, schema: p.schema ?? p.content?.['application/json']?.schema ?? {} })),
        headers: params.filter((p) => p.in === 'header').map((p) => p.name),
        content: Object.fromEntries(
          Object.entries((o.requestBody?.content ?? {}) as Record<string, { schema: Schema }>).map(([k, v]) => [
            k,
            v.schema,
          ]),
        ),
      });
    }
  }
  return out.sort((a, b) => `${a.template} ${a.method}`.localeCompare(`${b.template} ${b.method}`));
}

/** Characters fetch sends in a header value (no controls other than tab, nothing above U+00FF). */
const HEADER_VALUES = [
  '',
  ' ',
  'x'.repeat(300),
  'é',
  '\t',
  "' OR 1=1",
  '../..',
  '%00',
  '-1',
  '99999999999999999999',
  '1e3',
  'abc',
  '0',
  '\u00ff\u00fe',
];

function pathValue(r: Random, f: Fixtures, op: Operation, name: string): string {
  if (r.chance(0.25)) {
    const hostile = r.pick([hostileString(r), NUL, '\ud800', 'x'.repeat(5000)]);
    // Raw escapes too: %00 decodes to U+0000, %zz and a lone % do not decode at all.
    return r.chance(0.3)
      ? r.pick(['%00', '%zz', '%', '%ED%A0%80', '..%2F..%2Fetc', '%2e%2e'])
      : encodeURIComponent(hostile.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
  const t = op.template;
  if (name === 'item_id') return f.itemId;
  if (name === 'key_id') return f.spareKeyId;
  if (name === 'path')
    return t.startsWith('/console') ? r.pick(['index.html', 'assets/a.js', 'x']) : r.pick(['a/b.png', 'blobs/x']);
  if (t.startsWith('/v1/vectors/collections')) return r.chance(0.8) ? f.collectionId : 'col_none';
  if (t.startsWith('/v1/video/tasks')) return r.chance(0.8) ? f.taskId : 'vt_none';
  if (t.includes('/projects/')) return r.chance(0.8) ? f.projectId : 'proj_none';
  // Never a real model id: the sweep must not delete a model the server serves.
  if (t.startsWith('/admin/v1/models')) return 'fuzz-no-such-model';
  if (t.startsWith('/v1/models')) return r.pick(['detect', 'fuzz-none']);
  return 'x';
}

function credential(r: Random, f: Fixtures, op: Operation): string | null {
  const right = op.auth === 'admin' ? f.adminToken : f.key;
  const roll = r.next();
  if (roll < 0.85) return op.auth === 'none' && r.chance(0.5) ? null : right;
  if (roll < 0.9) return null;
  if (roll < 0.95) return r.pick(['sk_sf_bogus', 'x', `${right}x`, '']);
  return op.auth === 'admin' ? f.key : f.adminToken;
}

const jsonText = (v: unknown) => JSON.stringify(v) ?? 'null';

function multipart(r: Random, fields: Record<string, unknown>): { body: Buffer; type: string } {
  const boundary = r.chance(0.9) ? 'fuzzboundary' : r.pick(['', 'x'.repeat(80), 'a b ']);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(fields)) {
    const name = r.chance(0.05) ? `${k}${NUL}` : k;
    const text = typeof v === 'string' ? v : jsonText(v);
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${text}\r\n`);
  }
  if (r.chance(0.3))
    parts.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\u0089PNG\r\n\u001a\n${'\u0000'.repeat(r.int(40))}\r\n`,
    );
  let text = `${parts.join('')}--${boundary}--\r\n`;
  if (r.chance(0.15)) text = text.slice(0, r.int(text.length));
  return { body: Buffer.from(text, 'latin1'), type: `multipart/form-data; boundary=${boundary}` };
}

function jsonRpc(r: Random, f: Fixtures): unknown {
  const id = r.pick([1, 'a', null, 0, -1, 2 ** 53, {}]);
  const tool = f.tools.length ? r.pick(f.tools) : null;
  const base = r.pick([
    {
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
    },
    { jsonrpc: '2.0', id, method: 'tools/list', params: {} },
    { jsonrpc: '2.0', id, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id, result: {} },
    { jsonrpc: '2.0', id, method: 'resources/list' },
    tool
      ? { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: {} } }
      : { jsonrpc: '2.0', id, method: 'tools/list' },
    tool
      ? { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: {} } }
      : { jsonrpc: '2.0', id, method: 'tools/list' },
  ]) as Record<string, any>;
  return base;
}

/** Request `n` of the sequence of `seed`: the same inputs always give the same request. */
export function generate(
  seed: number,
  n: number,
  ops: Operation[],
  f: Fixtures,
  components: Record<string, Schema>,
): FuzzRequest {
  const r = new Random((seed * 1_000_003 + n * 7919) >>> 0);
  const op = ops[n % ops.length]!;
  const hints: Record<string, unknown[]> = {
    id: ['it1', f.itemId],
    model: ['detect', 'ocr', 'describe', 'fuzz'],
    model_id: ['multimodal-embedding-v1', 'fuzz'],
    name: ['fuzz-name', 'n'],
    text: ['hello fuzz', 'a cat'],
    type: ['video_url'],
  };
  const ctx = { r, components, hints };

  let path = op.template.replace(/\{([^}]+)\}/g, (_m, name: string) => pathValue(r, f, op, name));
  const headers: Record<string, string> = {};
  const cred = credential(r, f, op);
  if (cred !== null)
    headers.authorization = r.chance(0.97)
      ? `Bearer ${cred}`
      : r.pick([cred, `Basic ${cred}`, 'Bearer', `Bearer  ${cred} x`]);

  // Query: documented parameters at random, sometimes hostile, sometimes unknown ones.
  const q = new URLSearchParams();
  for (const p of op.query) {
    if (!r.chance(0.3)) continue;
    const v = sample(ctx, p.schema, p.name);
    q.append(p.name, r.chance(0.25) ? hostileString(r) : typeof v === 'string' ? v : jsonText(v));
  }
  if (r.chance(0.1))
    q.append(r.pick(['bogus', `k${NUL}`, '__proto__', 'limit', 'cursor', 'sessionId', 'offset']), hostileString(r));
  let qs = q.toString();
  if (r.chance(0.05)) qs += r.pick(['&%ff=%00', '&a=%zz', '&=', '&&&', '&a', '&%00']);
  if (qs) path += `?${qs}`;
  // What fetch will send (it resolves dot segments such as %2e%2e): the recorded request is the real one.
  const sent = new URL(path, 'http://127.0.0.1');
  path = sent.pathname + sent.search;

  for (const h of op.headers)
    if (r.chance(0.2)) headers[h.toLowerCase()] = r.chance(0.5) ? `fuzz-${seed}-${n}` : r.pick(HEADER_VALUES);
  if (op.template.endsWith('/stream') && r.chance(0.3)) headers['last-event-id'] = r.pick(HEADER_VALUES);
  if (op.template.startsWith('/v1/files') && r.chance(0.3))
    headers.range = r.pick(['bytes=0-', 'bytes=-1', 'bytes=5-1', 'bytes=x', 'bytes=0-1,2-3']);
  if (r.chance(0.05)) headers['x-request-id'] = r.pick(HEADER_VALUES);

  let body: string | Buffer | undefined;
  const isMcp = op.template === '/mcp' || op.template === '/mcp/messages';
  if (isMcp) {
    if (r.chance(0.7)) headers['mcp-session-id'] = f.mcpSession;
    else if (r.chance(0.3)) headers['mcp-session-id'] = r.pick(HEADER_VALUES);
    headers.accept = r.pick(['application/json, text/event-stream', 'text/event-stream', 'application/json', '*/*']);
  }
  if (op.method !== 'GET') {
    const types = Object.keys(op.content);
    if (isMcp && op.method === 'POST') {
      let msg = jsonRpc(r, f);
      const tool = f.tools.find((t) => t.name === (msg as { params?: { name?: string } }).params?.name);
      if (tool) (msg as { params: { arguments: unknown } }).params.arguments = sample(ctx, tool.inputSchema);
      if (r.chance(0.6)) msg = mutate(r, msg);
      if (r.chance(0.1)) msg = [msg, jsonRpc(r, f)];
      body = jsonText(msg);
      headers['content-type'] = 'application/json';
    } else if (types.length) {
      const roll = r.next();
      const fields = sample(ctx, op.content['application/json'] ?? op.content[types[0]!], '');
      if (roll < 0.08 && op.content['multipart/form-data']) {
        const mp = multipart(r, (fields && typeof fields === 'object' ? fields : {}) as Record<string, unknown>);
        body = mp.body;
        headers['content-type'] = mp.type;
      } else if (roll < 0.12 && op.content['image/png']) {
        body = Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256)));
        headers['content-type'] = r.pick(['image/png', 'image/jpeg', 'image/webp']);
      } else if (roll < 0.2) {
        // The body as bytes gone wrong: cut short, not JSON, the wrong type, or none.
        const text = jsonText(fields);
        body = r.pick([
          text.slice(0, r.int(text.length)),
          '{',
          '[]',
          'null',
          '1',
          '"x"',
          '{"a":1}{',
          `{"x":"${'\\ud800'}"}`,
          '',
          '\u00ff\u00fe',
        ]);
        headers['content-type'] = r.pick([
          'application/json',
          'application/json; charset=latin1',
          'text/plain',
          'application/x-www-form-urlencoded',
          '',
        ]);
      } else {
        body = jsonText(r.chance(0.75) ? mutate(r, fields) : fields);
        headers['content-type'] = 'application/json';
      }
    } else if (r.chance(0.15)) {
      body = jsonText(hostileValue(r));
      headers['content-type'] = 'application/json';
    }
  }
  return { n, op, method: op.method, path, headers, body };
}

/** The request as a reader can replay it (and as the failure message prints it). */
export function describeRequest(seed: number, q: FuzzRequest): string {
  const body =
    q.body === undefined
      ? '(none)'
      : typeof q.body === 'string'
        ? JSON.stringify(q.body.slice(0, 4000))
        : `base64:${q.body.toString('base64').slice(0, 4000)}`;
  const headers = Object.entries(q.headers)
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  return `seed ${seed}, request #${q.n} (npm run fuzz -- --seed ${seed} --seconds N replays the sequence)\n${q.method} ${q.path}\n${headers}\nbody: ${body}`;
}
