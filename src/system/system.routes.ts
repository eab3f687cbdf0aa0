// Unauthenticated probes and the API description.
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Services } from '../services/services.js';
import { buildOpenApi } from '../http/openapi.js';

/** The top of an OpenAPI 3.1 document; what lies under `paths` is the linter's business. */
const OpenApiDocument = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});
const Health = z.object({ status: z.enum(['ok', 'not_ready']), checks: z.record(z.string(), z.boolean()).optional() });

export function systemRoutes(s: Services, allRoutes: () => RouteDef[]): RouteDef[] {
  let openapi: string | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      summary: 'Process is up',
      tags: ['system'],
      noBody: true,
      responses: { 200: { description: 'Up', schema: Health } },
      handler: async () => ({ json: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      auth: 'none',
      summary: 'Database reachable and models ready',
      tags: ['system'],
      noBody: true,
      responses: { 200: { description: 'Ready', schema: Health }, 503: { description: 'Not ready', schema: Health } },
      handler: async () => {
        const checks: Record<string, boolean> = { database: await s.db.ping() };
        for (const [name, check] of s.readiness) checks[name] = check();
        const ok = Object.values(checks).every(Boolean);
        return { status: ok ? 200 : 503, json: { status: ok ? 'ok' : 'not_ready', checks } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      auth: 'none',
      summary: 'This API description (OpenAPI 3.1)',
      tags: ['system'],
      noBody: true,
      responses: { 200: { description: 'OpenAPI document', schema: OpenApiDocument } },
      handler: async () => {
        // Routes are fixed after start, so the document is built once.
        openapi ??= JSON.stringify(buildOpenApi(allRoutes(), s.version));
        return { headers: { 'Content-Type': 'application/json' }, body: openapi };
      },
    }),
  ];
}
