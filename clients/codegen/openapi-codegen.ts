// The client SDKs' types, generated from the server's OpenAPI document: one TypeScript module
// (clients/typescript/src/generated/api.ts) and one Python module (clients/python/sightflow/_generated.py),
// each holding the document's named component schemas, the request and response shape of every operation,
// and a runtime table of every operation (method, path, path parameters, whether it takes Idempotency-Key).
// Both are pure functions of the document, so a test regenerates them from the served document and fails
// when the committed files differ (test/clients/generated-types.test.ts). No dependency: the document only
// uses a small part of JSON Schema (objects, arrays, unions, enums, consts, refs).

type Json = Record<string, any>;

export interface OperationInfo {
  id: string;
  method: string;
  path: string;
  pathParams: string[];
  queryParams: Array<{ name: string; required: boolean; schema: Json }>;
  idempotencyKey: boolean;
  auth: 'key' | 'admin' | 'none';
  summary: string;
  body: Json | null;
  bodyRequired: boolean;
  /** Content types of the request body besides JSON (multipart, raw images). */
  bodyTypes: string[];
  response: Json | null;
  responseType: string | null;
}

/** Every operation of the document, sorted by id, so the output does not depend on route order. */
export function operationsOf(doc: Json): OperationInfo[] {
  const out: OperationInfo[] = [];
  for (const [path, ops] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(ops)) {
      const params: Json[] = op.parameters ?? [];
      const ok = Object.keys(op.responses ?? {})
        .filter((s) => /^2\d\d$/.test(s))
        .sort()[0];
      const content: Json = ok ? (op.responses[ok].content ?? {}) : {};
      const responseType = Object.keys(content)[0] ?? null;
      const security = op.security?.[0] ? Object.keys(op.security[0])[0] : null;
      const bodyContent: Json = op.requestBody?.content ?? {};
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params
          .filter((p) => p.in === 'query')
          .map((p) => ({
            name: p.name,
            required: !!p.required,
            schema: p.schema ?? p.content?.['application/json']?.schema ?? {},
          })),
        idempotencyKey: params.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key'),
        auth: security === 'apiKey' ? 'key' : security === 'adminToken' ? 'admin' : 'none',
        summary: op.summary ?? '',
        body: bodyContent['application/json']?.schema ?? null,
        bodyRequired: !!op.requestBody?.required,
        bodyTypes: Object.keys(bodyContent).filter((t) => t !== 'application/json'),
        response: responseType === 'application/json' ? (content[responseType].schema ?? null) : null,
        responseType,
      });
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const refName = (ref: string) => ref.replace(/^#\/components\/schemas\//, '');
const tsKey = (k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k));

function tsType(s: Json | undefined, indent: string): string {
  if (!s || typeof s !== 'object' || Object.keys(s).filter((k) => k !== 'description').length === 0) return 'unknown';
  if (s.$ref) return refName(s.$ref);
  if ('const' in s) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  const union = s.anyOf ?? s.oneOf;
  if (union) return [...new Set<string>(union.map((u: Json) => tsType(u, indent)))].join(' | ');
  if (s.allOf) return s.allOf.map((u: Json) => tsType(u, indent)).join(' & ');
  if (Array.isArray(s.type)) return s.type.map((t: string) => tsType({ ...s, type: t }, indent)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      if (s.prefixItems) return `[${s.prefixItems.map((u: Json) => tsType(u, indent)).join(', ')}]`;
      return `Array<${tsType(s.items, indent)}>`;
    case 'object': {
      const props = Object.entries<Json>(s.properties ?? {});
      const extra = s.additionalProperties;
      const inner = indent + '  ';
      const lines = props.map(
        ([k, v]) => `${inner}${tsKey(k)}${(s.required ?? []).includes(k) ? '' : '?'}: ${tsType(v, inner)};`,
      );
      if (extra && typeof extra === 'object') lines.push(`${inner}[key: string]: ${tsType(extra, inner)};`);
      else if (extra !== false && props.length === 0) return 'Record<string, unknown>';
      return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : 'Record<string, never>';
    }
    default:
      return 'unknown';
  }
}

/** A query parameter's type: its schema's, and numbers and booleans too (they are sent as text). */
function queryType(schema: Json): string {
  const t = tsType(schema, '      ');
  if (t.includes('{')) return t;
  return [...new Set([...t.split(' | '), 'number', 'boolean'])].join(' | ');
}

export function typescriptModule(doc: Json): string {
  const ops = operationsOf(doc);
  const schemas = Object.entries<Json>(doc.components?.schemas ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const out: string[] = [
    '// Generated from the sightflow OpenAPI document by clients/codegen/generate.ts: do not edit by hand.',
    `// Document version ${doc.info?.version ?? '?'}; regenerate with \`node --import tsx clients/codegen/generate.ts\`.`,
    '/* eslint-disable */',
    '',
  ];
  for (const [name, s] of schemas) {
    if (s.description) out.push(`/** ${String(s.description).replace(/\*\//g, '* /')} */`);
    out.push(`export type ${name} = ${tsType(s, '')};`, '');
  }
  out.push(
    "/** Each operation's path parameters, query, JSON body and 2xx JSON answer. */",
    'export interface Operations {',
  );
  for (const op of ops) {
    const path = op.pathParams.length
      ? `{ ${op.pathParams.map((p) => `${tsKey(p)}: string`).join('; ')} }`
      : 'Record<string, never>';
    const query = op.queryParams.length
      ? `{\n${op.queryParams.map((q) => `      ${tsKey(q.name)}${q.required ? '' : '?'}: ${queryType(q.schema)};`).join('\n')}\n    }`
      : 'Record<string, never>';
    out.push(`  /** ${op.method} ${op.path}: ${op.summary.replace(/\*\//g, '* /')} */`);
    out.push(`  ${tsKey(op.id)}: {`);
    out.push(`    path: ${path};`);
    out.push(`    query: ${query};`);
    out.push(`    body: ${op.body ? tsType(op.body, '    ') : 'never'};`);
    out.push(`    response: ${op.response ? tsType(op.response, '    ') : op.responseType ? 'Response' : 'void'};`);
    out.push('  };');
  }
  out.push('}', '');
  out.push('export type OperationId = keyof Operations;', '');
  out.push(
    'export interface OperationSpec {',
    '  method: string;',
    '  path: string;',
    '  pathParams: readonly string[];',
    '  idempotencyKey: boolean;',
    "  auth: 'key' | 'admin' | 'none';",
    '  /** Content type of the 2xx answer (null: no body). */',
    '  responseType: string | null;',
    '  /** Request body types besides JSON. */',
    '  bodyTypes: readonly string[];',
    '}',
    '',
  );
  out.push('export const OPERATIONS: { readonly [K in OperationId]: OperationSpec } = {');
  for (const op of ops) {
    out.push(
      `  ${tsKey(op.id)}: { method: ${JSON.stringify(op.method)}, path: ${JSON.stringify(op.path)}, pathParams: ${JSON.stringify(op.pathParams)}, idempotencyKey: ${op.idempotencyKey}, auth: ${JSON.stringify(op.auth)}, responseType: ${JSON.stringify(op.responseType)}, bodyTypes: ${JSON.stringify(op.bodyTypes)} },`,
    );
  }
  out.push('};', '');
  return out.join('\n');
}

// ---- Python ----

const PY_KEYWORDS = new Set([
  'from',
  'class',
  'def',
  'return',
  'import',
  'in',
  'is',
  'not',
  'and',
  'or',
  'global',
  'lambda',
  'pass',
  'with',
  'yield',
  'as',
  'if',
  'else',
  'elif',
  'for',
  'while',
  'try',
  'except',
  'finally',
  'raise',
  'del',
  'assert',
  'break',
  'continue',
  'None',
  'True',
  'False',
]);

/**
 * Python types of a schema. An object with properties inside a named schema becomes a TypedDict of its own,
 * named after the path to it (`Task` -> `TaskProgress`), emitted before the class that uses it (`hoist`).
 */
interface PyContext {
  hoist: string[][];
  taken: Set<string>;
}

const pascal = (k: string) =>
  k
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

function pyType(s: Json | undefined, name: string, ctx: PyContext): string {
  if (!s || typeof s !== 'object' || Object.keys(s).filter((k) => k !== 'description').length === 0) return 'Any';
  if (s.$ref) return `"${refName(s.$ref)}"`;
  if ('const' in s) return `Literal[${pyLiteral(s.const)}]`;
  if (s.enum) return `Literal[${s.enum.map(pyLiteral).join(', ')}]`;
  const union = s.anyOf ?? s.oneOf;
  if (union) return [...new Set<string>(union.map((u: Json) => pyType(u, name, ctx)))].join(' | ');
  if (Array.isArray(s.type)) return s.type.map((t: string) => pyType({ ...s, type: t }, name, ctx)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'array':
      return `list[${s.items ? pyType(s.items, name, ctx) : 'Any'}]`;
    case 'object': {
      if (!Object.keys(s.properties ?? {}).length) return 'dict[str, Any]';
      let n = name;
      for (let i = 2; ctx.taken.has(n); i++) n = `${name}${i}`;
      ctx.taken.add(n);
      ctx.hoist.push(pyTypedDict(n, s, ctx));
      return `"${n}"`;
    }
    default:
      return 'Any';
  }
}

function pyLiteral(v: unknown): string {
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return JSON.stringify(v);
}

/** A TypedDict of an object schema; a name that is not an identifier makes it the functional form. */
function pyTypedDict(name: string, s: Json, ctx: PyContext): string[] {
  const props = Object.entries<Json>(s.properties ?? {});
  const required = new Set<string>(s.required ?? []);
  if (s.type !== 'object' || props.length === 0) return [`${name} = ${pyType(s, name, ctx).replace(/"/g, '')}`];
  const bad = props.some(([k]) => PY_KEYWORDS.has(k) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
  const field = (k: string, v: Json) => {
    const t = pyType(v, `${name}${pascal(k)}`, ctx);
    return required.has(k) ? t : `NotRequired[${t}]`;
  };
  if (bad) {
    return [
      `${name} = TypedDict(${JSON.stringify(name)}, {`,
      ...props.map(([k, v]) => `    ${JSON.stringify(k)}: ${field(k, v)},`),
      '})',
    ];
  }
  const lines = [`class ${name}(TypedDict):`];
  if (s.description) lines.push(`    """${String(s.description).replace(/"""/g, "\'\'\'").replace(/\\/g, '\\\\')}"""`);
  for (const [k, v] of props) lines.push(`    ${k}: ${field(k, v)}`);
  return lines;
}

export function pythonModule(doc: Json): string {
  const ops = operationsOf(doc);
  const schemas = Object.entries<Json>(doc.components?.schemas ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const ctx: PyContext = { hoist: [], taken: new Set(schemas.map(([n]) => n)) };
  const out: string[] = [
    '# Generated from the sightflow OpenAPI document by clients/codegen/generate.ts: do not edit by hand.',
    `# Document version ${doc.info?.version ?? '?'}; regenerate with \`node --import tsx clients/codegen/generate.ts\`.`,
    'from __future__ import annotations',
    '',
    'from typing import Any, Literal, NotRequired, TypedDict',
    '',
    '',
  ];
  for (const [name, s] of schemas) {
    const cls = pyTypedDict(name, s, ctx);
    for (const h of ctx.hoist.splice(0)) out.push(...h, '', '');
    out.push(...cls, '', '');
  }
  out.push(
    `__all__ = [${[...ctx.taken]
      .sort()
      .map((n) => JSON.stringify(n))
      .join(', ')}, "OPERATIONS", "RESPONSE_SCHEMAS"]`,
    '',
  );
  out.push('# Every operation of the document: method, path, path parameters, whether it takes Idempotency-Key,');
  out.push('# the credential it needs and the content type of its 2xx answer.');
  out.push('OPERATIONS: dict[str, dict[str, Any]] = {');
  for (const op of ops) {
    out.push(
      `    ${JSON.stringify(op.id)}: {"method": ${JSON.stringify(op.method)}, "path": ${JSON.stringify(op.path)}, "path_params": (${op.pathParams.map((p) => JSON.stringify(p) + ',').join(' ')}), "idempotency_key": ${op.idempotencyKey ? 'True' : 'False'}, "auth": ${JSON.stringify(op.auth)}, "response_type": ${op.responseType === null ? 'None' : JSON.stringify(op.responseType)}},`,
    );
  }
  out.push('}', '');
  // Response TypedDict aliases per operation would repeat the schemas; names map to the named ones instead.
  out.push('# The named schema each operation answers, where its 2xx answer is one.');
  out.push('RESPONSE_SCHEMAS: dict[str, str] = {');
  for (const op of ops)
    if (op.response?.$ref) out.push(`    ${JSON.stringify(op.id)}: ${JSON.stringify(refName(op.response.$ref))},`);
  out.push('}', '');
  return out.join('\n');
}
