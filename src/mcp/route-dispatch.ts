// Calling a REST route in-process for a tool: the arguments are split into path parameters and the body (or a
// GET's query), validated with the route's own schemas and messages exactly as the HTTP server does, and the
// handler runs with a context built for an internal call. The handler cannot tell the difference, so billing,
// project scoping and errors are those of the REST endpoint.
import { randomUUID } from 'node:crypto';
import type { Method, RequestContext, RouteDef } from '../http/route.js';
import type { HttpResponse } from '../http/uws.js';
import type { SseWriter } from '../http/sse.js';
import { validate } from '../http/validation.js';
import { checkPathParams } from '../http/storable-text.js';
import { errors } from '../base/errors.js';
import type { Principal } from '../auth/authenticator.js';
import type { Logger } from '../base/log.js';

export interface RouteCall {
  def: RouteDef;
  pathParams: string[];
  args: Record<string, unknown> | undefined;
  principal: Principal;
  signal: AbortSignal;
  log: Logger;
  /** The body limit of the HTTP server (a route without its own bodyLimit uses it). */
  maxJsonBytes: number;
}

export interface RouteAnswer {
  status: number;
  json: unknown;
  requestId: string;
}

const describe = (v: unknown): string =>
  v === undefined
    ? 'nothing'
    : v === null
      ? 'null'
      : Array.isArray(v)
        ? 'an array'
        : typeof v === 'object'
          ? 'an object'
          : JSON.stringify(v);

/** Query values arrive as JSON from a tool call; the route's query schema reads them as URL strings. */
function toQueryString(v: unknown): string {
  if (Array.isArray(v)) return v.map(String).join(',');
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/** Internal calls have no HTTP response; a route that wants one (a stream, a file) is not a tool. */
const NO_RESPONSE = new Proxy(
  {},
  {
    get(_t, prop) {
      throw new Error(`an MCP tool call has no HTTP response (tried res.${String(prop)})`);
    },
  },
) as HttpResponse;

export async function callRoute(c: RouteCall): Promise<RouteAnswer> {
  const { def } = c;
  const args = c.args ?? {};
  const params: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (!c.pathParams.includes(k)) rest[k] = v;
  for (const p of c.pathParams) {
    const v = args[p];
    if (typeof v !== 'string' || v.length === 0)
      throw errors.invalidParam(p, `Expected a non-empty string for ${p} but received ${describe(v)}`);
    params[p] = v;
  }
  checkPathParams(params);

  let body: unknown = undefined;
  let query: unknown = {};
  let rawQuery = new URLSearchParams();
  if (def.body) {
    // The same byte limit as the REST body: the JSON-RPC envelope around it is not counted.
    const limit = def.bodyLimit ?? c.maxJsonBytes;
    if (Buffer.byteLength(JSON.stringify(rest)) > limit) throw errors.payloadTooLarge('request body', limit);
    body = validate(def.body, rest, 'body');
  } else if (def.query) {
    rawQuery = new URLSearchParams(
      Object.entries(rest)
        .filter(([, v]) => v !== undefined && v !== null)
        .map(([k, v]) => [k, toQueryString(v)]),
    );
    query = validate(def.query, Object.fromEntries(rawQuery), 'query');
  } else {
    const unknown = Object.keys(rest);
    if (unknown.length) {
      const takes = c.pathParams.length
        ? `; this tool takes only ${c.pathParams.join(', ')}`
        : '; this tool takes no arguments';
      throw errors.invalidParam(
        unknown[0]!,
        `Unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}${takes}`,
      );
    }
  }

  const requestId = `req_mcp_${randomUUID().replace(/-/g, '')}`;
  const path = def.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
  let childLog: Logger | null = null;
  const log = c.log;
  const ctx: RequestContext = {
    method: def.method as Method,
    path,
    params,
    query,
    rawQuery,
    body,
    requestId,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    principal: c.principal,
    signal: c.signal,
    res: NO_RESPONSE,
    remoteAddress: '',
    get log() {
      return (childLog ??= log.child({ requestId }));
    },
    sse: (): SseWriter => {
      throw new Error('an MCP tool call cannot open an event stream');
    },
  };
  const reply = await def.handler(ctx);
  if (!('json' in reply)) throw errors.notATool(def.method, def.path);
  return { status: reply.status ?? 200, json: reply.json, requestId };
}
