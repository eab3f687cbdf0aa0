// `Idempotency-Key` for POSTs that create something: a client that retries after a timeout or a dropped
// connection must not create a second task, collection or item. The first request with a key claims a
// row (project, key) in the database before doing the work (INSERT ... ON CONFLICT DO NOTHING), so exactly
// one request of any number sent at once, to any node, runs; it then stores its response. Later requests
// with the same key and the same request (method, path, body) get that stored status and body back for
// 24 hours, marked `Idempotent-Replayed: true`; with another request they get 409 idempotency_conflict.
// Requests that arrive while the first is still running wait for its response. Only successful (2xx)
// JSON responses are kept: an error releases the key, so the retry runs the work again.
import { createHash, randomUUID } from 'node:crypto';
import { errors } from '../base/errors.js';
import type { Db } from '../store/db.js';
import type { Reply, RequestContext, RouteDef } from './route.js';
import { sql } from './idempotency.sql.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a key's first response is replayed (and the key stays bound to its request). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A claim without a response this old was abandoned (its node died mid-request); the key is free again. */
const ABANDONED_MS = 10 * 60_000;
/** How long a request waits for the first request with its key before answering 409. */
const WAIT_MS = 60_000;
const MAX_KEY_LENGTH = 255;
/** Printable ASCII, no spaces at either end (the header value as clients generate it: UUIDs, hashes). */
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

export const IDEMPOTENCY_HEADER_DOC = {
  name: 'Idempotency-Key',
  description: `Optional, at most ${MAX_KEY_LENGTH} printable ASCII characters, unique per project. The same key with the same request within 24 h returns the first response (status and body, header Idempotent-Replayed: true) without doing the work again; with a different request it is 409 idempotency_conflict. Concurrent requests with one key run the work once.`,
  maxLength: MAX_KEY_LENGTH,
};

function fingerprint(ctx: RequestContext): string {
  const h = createHash('sha256').update(`${ctx.method} ${ctx.path}\n`);
  const b: unknown = ctx.body;
  if (Buffer.isBuffer(b) || b instanceof Uint8Array) h.update(b);
  else h.update(JSON.stringify(b ?? null));
  return h.digest('base64url');
}

/** The key of a request, validated; undefined without the header. */
export function idempotencyKey(ctx: RequestContext): string | undefined {
  const raw = ctx.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  if (raw.length > MAX_KEY_LENGTH || !KEY_PATTERN.test(raw)) {
    throw errors.invalidParam(
      'Idempotency-Key',
      `Expected an Idempotency-Key of 1-${MAX_KEY_LENGTH} printable ASCII characters but received ${raw.length > 40 ? `${raw.length} characters` : JSON.stringify(raw)}`,
    );
  }
  return raw;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Old records of every project are deleted at most this often per process (each claim also frees its own key). */
const PURGE_EVERY_MS = 3600_000;
const lastPurge = new WeakMap<Db, number>();

/**
 * Makes a key-authenticated route honour Idempotency-Key (and documents the header). The project comes from
 * the API key, so keys of different projects never meet.
 */
export function idempotent<B, Q>(db: Db, def: RouteDef<B, Q>): RouteDef<B, Q> {
  const handler = def.handler;
  return {
    ...def,
    headerParams: [...(def.headerParams ?? []), IDEMPOTENCY_HEADER_DOC],
    responses: {
      409: {
        description:
          'Idempotency-Key reused with a different request, or its first request still running (idempotency_conflict)',
      },
      ...def.responses,
    },
    handler: async (ctx) => {
      const key = idempotencyKey(ctx);
      if (key === undefined) return handler(ctx);
      const project = ctx.principal.projectId;
      const fp = fingerprint(ctx);
      const now = Date.now();
      if (now - (lastPurge.get(db) ?? 0) > PURGE_EVERY_MS) {
        lastPurge.set(db, now);
        void db
          .query(sql.purge, [IDEMPOTENCY_TTL_MS])
          .catch((e) => ctx.log.warn({ err: e }, 'idempotency key purge failed'));
      }
      const until = now + WAIT_MS;
      let pause = 20;
      for (;;) {
        await db.query(sql.expire, [project, key, IDEMPOTENCY_TTL_MS, ABANDONED_MS]);
        const claim = randomUUID();
        if ((await db.query(sql.claim, [project, key, fp, claim])).length > 0) return run(ctx, key, claim);
        const [row] = await db.query(sql.get, [project, key]);
        if (row) {
          if (row.fingerprint !== fp) throw errors.idempotencyConflict(false);
          if (row.status !== null && row.status !== undefined) {
            return {
              status: Number(row.status),
              headers: { 'Idempotent-Replayed': 'true' },
              json: JSON.parse(String(row.response)),
            };
          }
        }
        // The first request is still running (or just gave the key up): wait, then look again.
        if (Date.now() > until || ctx.signal.aborted) throw errors.idempotencyConflict(true);
        await sleep(pause, ctx.signal);
        pause = Math.min(pause * 2, 500);
      }
    },
  };

  async function run(ctx: RequestContext<B, Q>, key: string, claim: string): Promise<Reply> {
    const project = ctx.principal.projectId;
    let reply: Reply;
    try {
      reply = await handler(ctx);
    } catch (e) {
      await db
        .query(sql.release, [project, key, claim])
        .catch((err) => ctx.log.warn({ err }, 'idempotency key release failed'));
      throw e;
    }
    const status = 'handled' in reply ? 0 : (reply.status ?? 200);
    if ('json' in reply && status >= 200 && status < 300) {
      await db.query(sql.complete, [project, key, claim, status, JSON.stringify(reply.json)]);
    } else {
      await db.query(sql.release, [project, key, claim]);
    }
    return reply;
  }
}
