// The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with.
import { z, type ZodType } from 'zod';
import type { RouteDef } from './route.js';

const ErrorSchema = z.object({
  error: z.object({
    type: z.string(), code: z.string(), message: z.string(), param: z.string().nullable(),
  }),
}).meta({ id: 'Error' });

function schemaOf(s: ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

/** The request headers a route documents (Idempotency-Key), all optional. */
function headerParamsOf(r: RouteDef): unknown[] {
  return (r.headerParams ?? []).map((h) => ({
    name: h.name, in: 'header', required: false, description: h.description,
    schema: { type: 'string', ...(h.maxLength ? { maxLength: h.maxLength } : {}) },
  }));
}

export function buildOpenApi(routes: RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = toOpenApiPath(r.path);
    const params: unknown[] = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (r.path.endsWith('*')) params.push({ name: 'path', in: 'path', required: true, schema: { type: 'string' } });
    params.push(...headerParamsOf(r));
    if (r.query) {
      const qs = schemaOf(r.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(qs.properties ?? {})) {
        params.push({ name, in: 'query', required: qs.required?.includes(name) ?? false, schema });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      responses[status] = {
        description: resp.description,
        ...(resp.schema ? { content: { [resp.contentType ?? 'application/json']: { schema: schemaOf(resp.schema, 'output') } } } : {}),
      };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: schemaOf(ErrorSchema, 'output') } } };
    (paths[p] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: r.tags ?? [],
      operationId: `${r.method.toLowerCase()}_${r.path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      security: r.auth === 'key' ? [{ apiKey: [] }] : r.auth === 'admin' ? [{ adminToken: [] }] : [],
      ...(params.length ? { parameters: params } : {}),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(r.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'sightflow', version, description: 'Self-hosted vision, video and multimodal vector API. Errors use {error: {type, code, message, param}}.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Project API key sk_sf_...' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'SIGHTFLOW_ADMIN_TOKEN' },
      },
    },
    paths,
  };
}
