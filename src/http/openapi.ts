// The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with. It must pass a
// linter (refs resolve at document level, operation ids are unique) and say, for every status a route can
// answer, what the body is: error statuses without their own schema carry the shared Error shape. A schema
// with `.meta({ id })` becomes a named component (`#/components/schemas/<id>`), so client generators give
// the resources names (the SDKs' types: docs/clients.md, "Types"); operation ids name the resource and
// the action (`video.tasks.list`), derived from the method and path (operationIdOf).
import { z, type ZodType } from 'zod';
import type { RouteDef } from './route.js';
import { RAW_IMAGE_TYPES } from './image-upload.js';

/** The wire shape of every error (errors.ts toBody); one component of the document. */
export const ErrorSchema = z.object({
  error: z.object({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    param: z.string().nullable(),
  }),
});

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorContent = { 'application/json': { schema: ERROR_REF } };

/**
 * The document's named schemas, filled as the routes' schemas are converted. A schema's input and output
 * shapes can differ (defaults make a field optional on the way in): the input one is then `<id>Input`.
 */
type Components = Record<string, unknown>;

function schemaOf(s: ZodType, io: 'input' | 'output', components: Components): Record<string, unknown> {
  const out = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  const defs = out.$defs as Record<string, unknown> | undefined;
  delete out.$defs;
  if (!defs) return out;
  const names = new Map<string, string>(Object.keys(defs).map((id) => [id, id]));
  const relink = (x: unknown) =>
    JSON.parse(
      JSON.stringify(x).replace(/"#\/\$defs\/([^"]+)"/g, (_, id: string) =>
        JSON.stringify(`#/components/schemas/${names.get(id) ?? id}`),
      ),
    );
  // Bodies are compared as they will be stored: with their refs pointing at the components.
  const clash = (id: string) =>
    components[names.get(id)!] !== undefined &&
    JSON.stringify(components[names.get(id)!]) !== JSON.stringify(relink(defs[id]));
  if (io === 'input') for (const id of Object.keys(defs)) if (clash(id)) names.set(id, `${id}Input`);
  for (const id of Object.keys(defs))
    if (clash(id)) throw new Error(`OpenAPI: two different schemas are named ${names.get(id)}`);
  for (const [id, body] of Object.entries(defs)) components[names.get(id)!] = relink(body);
  return relink(out) as Record<string, unknown>;
}

/** Operation ids that the rules of operationIdOf would not give well: protocol and static routes. */
const OPERATION_IDS: Record<string, string> = {
  'GET /mcp': 'mcp.stream',
  'POST /mcp': 'mcp.post',
  'DELETE /mcp': 'mcp.delete',
  'POST /mcp/messages': 'mcp.messages.post',
  'GET /console': 'console.get',
  'GET /console/{path}': 'console.files.get',
  'GET /v1/files/{path}': 'files.get',
  'GET /healthz': 'system.health',
  'GET /readyz': 'system.ready',
  'GET /openapi.json': 'system.openapi',
  'GET /v1/vectors/models': 'vectors.models.list',
  'GET /v1/video/tasks/{id}/stream': 'video.tasks.stream',
};

/**
 * A resource-style operation id: the path's literal segments (`/v1` and `/admin/v1` give no segment of
 * their own beyond `admin`) and an action: `get` on an item, `list` on a collection (a path with items
 * under it, or an answer that is a list), `create` by POST on a collection, `update` by PATCH or PUT,
 * `delete`; a POST to a path that is neither is the action its last segment names (`video.tasks.cancel`,
 * `vision.detect`).
 */
function operationIdOf(method: string, path: string, allPaths: string[], answersList: boolean): string {
  const fixed = OPERATION_IDS[`${method} ${path}`];
  if (fixed) return fixed;
  const segments = path.split('/').filter(Boolean);
  const words = segments
    .filter((x, i) => !x.startsWith('{') && !(x === 'v1' && (i === 0 || segments[i - 1] === 'admin')))
    .map((x) => x.replace(/\.[a-z]+$/, '').replace(/[^A-Za-z0-9]+/g, '_'));
  const onItem = segments.at(-1)!.startsWith('{');
  const isCollection = allPaths.some((p) => p.startsWith(`${path}/{`));
  const last = words.length - 1;
  switch (method) {
    case 'GET':
      return `${words.join('.')}.${onItem ? 'get' : isCollection || answersList ? 'list' : 'get'}`;
    case 'PATCH':
    case 'PUT':
      return `${words.join('.')}.update`;
    case 'DELETE':
      return `${words.join('.')}.delete`;
    default:
      if (onItem) return `${words.join('.')}.${method.toLowerCase()}`;
      if (isCollection) return `${words.join('.')}.create`;
      return last > 0 ? `${words.slice(0, last).join('.')}.${words[last]}` : `${words[0]}.${method.toLowerCase()}`;
  }
}

export interface ObjectSchema {
  properties?: Record<string, Record<string, unknown>>;
  [k: string]: unknown;
}

/**
 * Request bodies: JSON always; routes that take binary images also multipart/form-data (the `image` part a
 * file) and raw image bodies. The raw form's other fields are query parameters, returned for the caller.
 */
function requestBodyOf(r: RouteDef, components: Components): { body: Record<string, unknown>; rawQuery: unknown[] } {
  const json = schemaOf(r.body!, 'input', components) as ObjectSchema;
  const content: Record<string, unknown> = { 'application/json': { schema: json } };
  const rawQuery: unknown[] = [];
  if (r.imageUpload) {
    const props = json.properties ?? {};
    const multipart: ObjectSchema = {
      ...json,
      properties: {
        ...props,
        image: {
          type: 'string',
          contentMediaType: 'application/octet-stream',
          description:
            'The image file (JPEG, PNG or WEBP, up to 20 MB); a plain text part instead is an http(s) URL as in JSON',
        },
      },
    };
    content['multipart/form-data'] = {
      schema: multipart,
      encoding: { image: { contentType: 'image/jpeg, image/png, image/webp, application/octet-stream, text/plain' } },
    };
    for (const type of RAW_IMAGE_TYPES) {
      content[type] = {
        schema: {
          type: 'string',
          contentMediaType: type,
          description: 'The image itself (up to 20 MB); the other fields go in the query string',
        },
      };
    }
    for (const [name, schema] of Object.entries(props)) {
      if (name === 'image' || name === 'image_base64') continue;
      // An object field (a search's filter) is JSON text in the parameter, which OpenAPI says with `content`
      // (a plain `schema` would mean form-style key=value pairs).
      const isObject = schema.type === 'object';
      rawQuery.push({
        name,
        in: 'query',
        required: false,
        ...(isObject ? { content: { 'application/json': { schema } } } : { schema }),
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
    name: h.name,
    in: 'header',
    required: false,
    description: h.description,
    schema: { type: 'string', ...(h.maxLength ? { maxLength: h.maxLength } : {}) },
  }));
}

export function buildOpenApi(routes: RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Components = { Error: schemaOf(ErrorSchema, 'output', {}) };
  const allPaths = routes.map((r) => toOpenApiPath(r.path));
  const operationIds = new Set<string>();
  for (const r of routes) {
    const p = toOpenApiPath(r.path);
    const params: unknown[] = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (r.path.endsWith('*')) params.push({ name: 'path', in: 'path', required: true, schema: { type: 'string' } });
    params.push(...headerParamsOf(r));
    if (r.query) {
      const qs = schemaOf(r.query, 'input', components) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(qs.properties ?? {})) {
        params.push({ name, in: 'query', required: qs.required?.includes(name) ?? false, schema });
      }
    }
    const request = r.body ? requestBodyOf(r, components) : null;
    if (request) params.push(...request.rawQuery);
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      const content = resp.schema
        ? { [resp.contentType ?? 'application/json']: { schema: schemaOf(resp.schema, 'output', components) } }
        : Number(status) >= 400
          ? errorContent
          : undefined;
      responses[status] = { description: resp.description, ...(content ? { content } : {}) };
    }
    // Every route can answer a client error (auth, rate limit, unknown path or method, bad input).
    if (!Object.keys(responses).some((s) => s.startsWith('4')))
      responses['4XX'] = { description: 'Client error', content: errorContent };
    responses.default = { description: 'Error', content: errorContent };
    const ok = Object.entries(r.responses).find(([status]) => status.startsWith('2'))?.[1];
    const answersList =
      !!ok?.schema &&
      (z.toJSONSchema(ok.schema, { io: 'output', unrepresentable: 'any' }) as ObjectSchema).properties?.object
        ?.const === 'list';
    const operationId = operationIdOf(r.method, p, allPaths, answersList);
    if (operationIds.has(operationId))
      throw new Error(`OpenAPI: operation id ${operationId} of ${r.method} ${p} is taken`);
    operationIds.add(operationId);
    (paths[p] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: r.tags ?? [],
      operationId,
      security: r.auth === 'key' ? [{ apiKey: [] }] : r.auth === 'admin' ? [{ adminToken: [] }] : [],
      ...(params.length ? { parameters: params } : {}),
      ...(request ? { requestBody: request.body } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'sightflow',
      version,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'Self-hosted vision, video and multimodal vector API. Errors use {error: {type, code, message, param}}.',
    },
    servers: [{ url: '/' }],
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Project API key sk_sf_...' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'SIGHTFLOW_ADMIN_TOKEN' },
      },
    },
    paths,
  };
}
