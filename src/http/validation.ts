// zod issues -> the catalogue's 400 with `param` naming the field ("steps[0].model").
import type { ZodError, ZodType } from 'zod';
import { errors } from '../base/errors.js';
import { findUnstorable, printable } from './storable-text.js';

export function paramPath(path: ReadonlyArray<PropertyKey>): string | null {
  if (!path.length) return null;
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

export function describeZodError(err: ZodError, root: string): { message: string; param: string | null } {
  const issue = err.issues[0]!;
  let path = [...issue.path];
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    path = [...path, keys[0]!];
    message = `Unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}`;
  }
  const param = paramPath(path);
  return { message: param ? `Invalid ${root} field ${param}: ${message}` : `Invalid ${root}: ${message}`, param };
}

export function validate<T>(schema: ZodType<T>, value: unknown, root: 'body' | 'query'): T {
  // Before the schema: the rule holds for every field, whatever the schema says of it (storable-text.ts).
  const refused = findUnstorable(value);
  if (refused) {
    const param = paramPath(refused.path.map((p) => (typeof p === 'string' ? printable(p) : p)));
    const it = refused.inKey ? 'its name contains' : 'it contains';
    throw errors.invalidBody(
      param ? `Invalid ${root} field ${param}: ${it} ${refused.why}` : `Invalid ${root}: ${it} ${refused.why}`,
      param,
    );
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const { message, param } = describeZodError(r.error, root);
  throw errors.invalidBody(message, param);
}
