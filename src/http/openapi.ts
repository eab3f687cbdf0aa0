// The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with. It must pass a
// linter (refs resolve at document level, operation ids are unique) and say, for every status a route can
// answer, what the body is: error statuses without their own schema carry the shared Error shape.
import { z, type ZodType } from 'zod';
import type { RouteDef } from './route.js';
import { RAW_IMAGE_TYPES } from './image-upload.js';

/** The wire shape of every error (errors.ts toBody); one component of the document. */
export const ErrorSchema = z.object({
  error: z.object({
    type: z.string(), code: z.string(), message: z.string(), param: z.string().nullable(),
  }),
});

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorContent = { 'application/json': { schema: ERROR_REF } };

function schemaOf(s: ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

export interface ObjectSchema { properties?: Record<string, Record<string, unknown>>; [k: string]: unknown }

/**
 * Request bodies: JSON always; routes that take binary images also multipart/form-data (the `image` part a
 * file) and raw image bodies. The raw form's other fields are query parameters, returned for the caller.
 */
function requestBodyOf(r: RouteDef): { body: Record<string, unknown>; rawQuery: unknown[] } {
  const json = schemaOf(r.body!, 'input') as ObjectSchema;
  const content: Record<string, unknown> = { 'application/json': { schema: json } };
  const rawQuery: unknown[] = [];
  if (r.imageUpload) {
    const props = json.properties ?? {};
    const multipart: ObjectSchema = {
      ...json,
      properties: {
        ...props,
        image: {
          type: 'string', contentMediaType: 'application/octet-stream',
          description: 'The image file (JPEG, PNG or WEBP, up to 20 MB); a plain text part instead is an http(s) URL as in JSON',
        },
      },
    };
    content['multipart/form-data'] = {
      schema: multipart,
      encoding: { image: { contentType: 'image/jpeg, image/png, image/webp, application/octet-stream, text/plain' } },
    };
    for (const type of RAW_IMAGE_TYPES) {
      content[type] = { schema: { type: 'string', contentMediaType: type, description: 'The image itself (up to 20 MB); the other fields go in the query string' } };
    }
    for (const [name, schema] of Object.entries(props)) {
      if (name === 'image' || name === 'image_base64') continue;
      // An object field (a search's filter) is JSON text in the parameter, which OpenAPI says with `content`
      // (a plain `schema` would mean form-style key=value pairs).
      const isObject = schema.type === 'object';
      rawQuery.push({
        name, in: 'query', required: false, ...(isObject ? { content: { 'application/json': { schema } } } : { schema }),
        description: `Only with a raw image body: the body field ${name}${schema.type === 'array' ? ' (repeat the parameter per element, or one JSON array)' : isObject ? ' as JSON text' : ''}`,
      });
    }
  }
  return { body: { required: true, content }, rawQuery };
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
    const request = r.body ? requestBodyOf(r) : null;
    if (request) params.push(...request.rawQuery);
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      const content = resp.schema ? { [resp.contentType ?? 'application/json']: { schema: schemaOf(resp.schema, 'output') } }
        : Number(status) >= 400 ? errorContent : undefined;
      responses[status] = { description: resp.description, ...(content ? { content } : {}) };
    }
    // Every route can answer a client error (auth, rate limit, unknown path or method, bad input).
    if (!Object.keys(responses).some((s) => s.startsWith('4'))) responses['4XX'] = { description: 'Client error', content: errorContent };
    responses.default = { description: 'Error', content: errorContent };
    (paths[p] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: r.tags ?? [],
      operationId: `${r.method.toLowerCase()}_${p.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      security: r.auth === 'key' ? [{ apiKey: [] }] : r.auth === 'admin' ? [{ adminToken: [] }] : [],
      ...(params.length ? { parameters: params } : {}),
      ...(request ? { requestBody: request.body } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'sightflow', version, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' }, description: 'Self-hosted vision, video and multimodal vector API. Errors use {error: {type, code, message, param}}.' },
    servers: [{ url: '/' }],
    components: {
      schemas: { Error: schemaOf(ErrorSchema, 'output') },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Project API key sk_sf_...' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'SIGHTFLOW_ADMIN_TOKEN' },
      },
    },
    paths,
  };
}
