// The one rule for text a request carries (docs/api.md, "Text the API refuses"): no U+0000 and no lone
// UTF-16 surrogate anywhere, in a value or an object key, at any depth. PostgreSQL's text and jsonb cannot
// hold U+0000 (it was a 500 wherever such a string reached SQL), and a lone surrogate cannot be encoded as
// UTF-8 (it would be stored as U+FFFD, not what was sent); no client means either. Checked where requests are
// validated (validation.ts for bodies and queries, the exchange for path and query parameters) so that every
// route, present and future, gets it. Nesting is bounded too: deeper values would overflow the stack of the
// recursive code that reads them (merge patches, JSON.stringify).
import { errors } from '../base/errors.js';

/** Deepest nesting of arrays and objects accepted in a body or tool arguments. */
export const MAX_DEPTH = 64;

type Check = (s: string) => boolean;
// String.prototype.isWellFormed (Node 20) is not in the ES2023 lib typings; V8 answers it without a scan for
// one-byte strings (most JSON text), as indexOf('\0') is a memchr.
const isWellFormed = (String.prototype as unknown as { isWellFormed: (this: string) => boolean }).isWellFormed;

/** Why a string cannot be taken as text, or null when it can. */
export function unstorable(s: string): string | null {
  if (s.indexOf('\u0000') !== -1) return 'U+0000 (NUL), which cannot be stored';
  if (!isWellFormed.call(s)) return 'a lone UTF-16 surrogate (half of a character), which cannot be stored';
  return null;
}

const isBad: Check = (s) => s.indexOf('\u0000') !== -1 || !isWellFormed.call(s);

// Control characters and lone surrogates (a well-formed pair, an emoji, stays as it is).
const UNPRINTABLE = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A key as it appears in `param`: control characters and lone surrogates written as \uXXXX escapes. */
export function printable(s: string): string {
  return s.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `why` reads after "it contains" (or "its name contains" when `inKey`). */
export interface Refusal {
  path: PropertyKey[];
  why: string;
  inKey: boolean;
}

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/**
 * The first refused string in a parsed value (JSON, a query object, multipart fields), with its path; null
 * when there is none. Only arrays and plain objects are walked (not Buffers); no allocation when all is well.
 */
export function findUnstorable(value: unknown): Refusal | null {
  return walk(value, 0);
}

const tooDeep = (): Refusal => ({
  path: [],
  why: `arrays or objects nested more than ${MAX_DEPTH} levels deep`,
  inKey: false,
});

function walk(v: unknown, depth: number): Refusal | null {
  if (typeof v === 'string') return isBad(v) ? { path: [], why: unstorable(v)!, inKey: false } : null;
  if (typeof v !== 'object' || v === null) return null;
  if (Array.isArray(v)) {
    if (depth >= MAX_DEPTH) return tooDeep();
    for (let i = 0; i < v.length; i++) {
      const r = walk(v[i], depth + 1);
      if (r) {
        r.path.unshift(i);
        return r;
      }
    }
    return null;
  }
  if (!isPlain(v)) return null;
  if (depth >= MAX_DEPTH) return tooDeep();
  const o = v as Record<string, unknown>;
  for (const k in o) {
    if (isBad(k)) return { path: [k], why: unstorable(k)!, inKey: true };
    const r = walk(o[k], depth + 1);
    if (r) {
      r.path.unshift(k);
      return r;
    }
  }
  return null;
}

/** Path parameters (already percent-decoded): a 400 invalid_parameter naming the first refused one. */
export function checkPathParams(params: Record<string, string>): void {
  for (const k in params) {
    const v = params[k]!;
    if (isBad(v))
      throw errors.invalidParam(
        k === '*' ? 'path' : k,
        `Invalid path parameter ${k === '*' ? 'path' : k}: it contains ${unstorable(v)!}`,
      );
  }
}

/** Every query parameter, names and values, whether or not the route has a query schema. */
export function checkQuery(query: URLSearchParams): void {
  for (const [k, v] of query) {
    if (isBad(k))
      throw errors.invalidParam(
        printable(k),
        `Invalid query parameter ${JSON.stringify(printable(k))}: its name contains ${unstorable(k)!}`,
      );
    if (isBad(v)) throw errors.invalidParam(k, `Invalid query parameter ${k}: it contains ${unstorable(v)!}`);
  }
}
