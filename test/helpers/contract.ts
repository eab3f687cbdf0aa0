// Response contract check for the test harness: every response a test receives through api() must be what
// the OpenAPI document says for that route and status. The check uses the same zod schemas the document is
// generated from (route.responses by status; error statuses without their own schema use the shared Error
// shape, as the document's default does), and additionally rejects fields the schema does not declare (zod
// objects strip unknown keys where the document says additionalProperties: false). A success status the
// route does not declare, or a JSON body where none is documented, is a failure too.
import type { ZodType } from 'zod';
import type { Router } from '../../src/http/router.js';
import { ErrorSchema } from '../../src/http/openapi.js';

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

/** Keys present in `raw` but gone from zod's parse of it: fields the schema does not declare. */
function extraKeys(raw: unknown, parsed: unknown, at: string, out: string[]): void {
  if (Array.isArray(raw) && Array.isArray(parsed)) {
    raw.forEach((v, i) => extraKeys(v, parsed[i], `${at}[${i}]`, out));
  } else if (raw && parsed && typeof raw === 'object' && typeof parsed === 'object' && !Array.isArray(raw)) {
    for (const k of Object.keys(raw)) {
      if (!(k in parsed)) out.push(`${at}.${k}`);
      else extraKeys((raw as Record<string, unknown>)[k], (parsed as Record<string, unknown>)[k], `${at}.${k}`, out);
    }
  }
}

function check(schema: ZodType, body: unknown, what: string): void {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issues = r.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new ContractViolation(
      `${what}: body does not match the documented schema: ${issues}\nbody: ${JSON.stringify(body).slice(0, 600)}`,
    );
  }
  const extra: string[] = [];
  extraKeys(body, r.data, '$', extra);
  if (extra.length) throw new ContractViolation(`${what}: undocumented fields ${extra.slice(0, 10).join(', ')}`);
}

/** Throws ContractViolation when a response does not match the document. */
export function checkResponse(
  router: Router,
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  text: string,
): void {
  const path = url.split('?')[0]!;
  const what = `${method} ${path} -> ${status}`;
  const isJson = (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';
  const parse = () => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ContractViolation(`${what}: Content-Type is application/json but the body is not JSON`);
    }
  };
  const match = router.match(method === 'HEAD' ? 'GET' : method, path);
  const declared = match.kind === 'found' ? match.def.responses[status] : undefined;
  if (status >= 400 && !declared?.schema) {
    if (!isJson)
      throw new ContractViolation(
        `${what}: an error must be the JSON error shape (got ${contentType ?? 'no Content-Type'})`,
      );
    if (method !== 'HEAD') check(ErrorSchema, parse(), what);
    return;
  }
  if (match.kind !== 'found') throw new ContractViolation(`${what}: no such route, yet a non-error status`);
  if (!declared)
    throw new ContractViolation(
      `${what}: status ${status} is not documented for ${match.def.method} ${match.def.path}`,
    );
  if (method === 'HEAD' || status === 204 || status === 304) return;
  const docType = declared.contentType ?? 'application/json';
  if (declared.schema && docType === 'application/json') {
    if (!isJson)
      throw new ContractViolation(`${what}: documented as application/json, got ${contentType ?? 'no Content-Type'}`);
    check(declared.schema, parse(), what);
  } else if (isJson && docType === 'application/json') {
    throw new ContractViolation(`${what}: a JSON body with no documented schema`);
  }
}
