// Tool definitions from the live route table: a catalogue entry whose route is registered becomes an MCP tool
// whose input schema is the route's body schema (or, for a GET, its query schema) plus its path parameters,
// and whose output schema is the route's success response schema. Schemas are JSON Schema draft-07, the
// dialect every MCP client's validator reads (the SDK client's Ajv among them).
import { z, type ZodType } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Router } from '../http/router.js';
import type { RouteDef } from '../http/route.js';
import { TOOL_CATALOGUE, type ToolSpec } from './tool-catalogue.js';

export interface RouteTool {
  spec: ToolSpec;
  def: RouteDef;
  /** Path parameter names in pattern order (`:id` -> `id`). */
  pathParams: string[];
  tool: Tool;
}

type JsonSchema = Record<string, unknown> & { properties?: Record<string, unknown>; required?: string[] };

function jsonSchema(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return inlineDefinitions(out);
}

/**
 * Named schemas (`.meta({ id })`, which name the OpenAPI document's components) come out as `definitions`
 * and refs; a tool's schema is offered with them inlined, so that it stands alone and an object answer
 * still says `type: "object"` at its top.
 */
function inlineDefinitions(out: JsonSchema): JsonSchema {
  const defs = out.definitions as Record<string, unknown> | undefined;
  if (!defs) return out;
  delete out.definitions;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const { $ref, ...rest } = node as Record<string, unknown>;
    const inlined = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, walk(v)]));
    if (typeof $ref === 'string' && $ref.startsWith('#/definitions/'))
      return { ...(walk(defs[$ref.slice('#/definitions/'.length)]) as object), ...inlined };
    return $ref === undefined ? inlined : { $ref, ...inlined };
  };
  return walk(out) as JsonSchema;
}

/** Responses may gain fields over time; a client must not reject a result for a field it does not know. */
function openObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) openObjects(n);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (o.additionalProperties === false) delete o.additionalProperties;
  for (const v of Object.values(o)) openObjects(v);
}

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
}

function inputSchema(def: RouteDef, spec: ToolSpec, pathParams: string[]): Tool['inputSchema'] {
  const source = def.body ?? (def.method === 'GET' ? def.query : undefined);
  const base: JsonSchema = source
    ? jsonSchema(source, 'input')
    : { type: 'object', properties: {}, additionalProperties: false };
  // A body that is not a plain object (a union at the top) is offered as is: the route validates it.
  if (base.type !== 'object') return { type: 'object', ...base } as Tool['inputSchema'];
  const properties: Record<string, unknown> = {};
  for (const p of pathParams)
    properties[p] = { type: 'string', minLength: 1, description: spec.pathParams?.[p] ?? `Path parameter ${p}` };
  Object.assign(properties, base.properties ?? {});
  const required = [...pathParams, ...(base.required ?? []).filter((r) => !pathParams.includes(r))];
  return { ...base, type: 'object', properties, ...(required.length ? { required } : {}) } as Tool['inputSchema'];
}

function outputSchema(def: RouteDef): Tool['outputSchema'] | undefined {
  const ok = Object.entries(def.responses)
    .map(([status, r]) => ({
      status: Number(status),
      schema: r.schema,
      json: !r.contentType || r.contentType === 'application/json',
    }))
    .filter((r) => r.status >= 200 && r.status < 300 && r.json)
    .sort((a, b) => a.status - b.status)[0];
  if (!ok?.schema) return undefined;
  const out = jsonSchema(ok.schema, 'output');
  // MCP structured content is an object; anything else is offered without an output schema.
  if (out.type !== 'object') return undefined;
  openObjects(out);
  return out as Tool['outputSchema'];
}

/**
 * The tools whose routes exist in this router. Built per call (cheap: a dozen schemas) so it always matches
 * the route table; cached per router size since routes are only ever added.
 */
export class RouteTools {
  private cache: { size: number; tools: Map<string, RouteTool> } | null = null;

  constructor(
    private readonly router: () => Router | undefined,
    private readonly catalogue: ToolSpec[] = TOOL_CATALOGUE,
  ) {}

  all(): Map<string, RouteTool> {
    const router = this.router();
    const routes = router?.all() ?? [];
    if (this.cache && this.cache.size === routes.length) return this.cache.tools;
    const tools = new Map<string, RouteTool>();
    for (const spec of this.catalogue) {
      const def = routes.find((r) => r.method === spec.method && r.path === spec.path);
      // Not registered yet (or on this build): not offered. Only JSON routes a key can call make tools.
      if (!def || def.auth !== 'key') continue;
      const pathParams = pathParamNames(def.path);
      const output = outputSchema(def);
      tools.set(spec.name, {
        spec,
        def,
        pathParams,
        tool: {
          name: spec.name,
          title: spec.title,
          description: spec.description,
          inputSchema: inputSchema(def, spec, pathParams),
          ...(output ? { outputSchema: output } : {}),
          annotations: { title: spec.title, ...spec.annotations },
        },
      });
    }
    this.cache = { size: routes.length, tools };
    return tools;
  }

  get(name: string): RouteTool | undefined {
    return this.all().get(name);
  }
}
