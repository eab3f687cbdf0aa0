// Unauthenticated probes and the API description; the host's NVIDIA cards for the admin API.
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
const GpuOut = z.object({
  object: z.literal('gpu'),
  index: z.number().int().describe("nvidia-smi's index (PCI bus order)"),
  uuid: z.string(),
  name: z.string(),
  error: z.string().optional().describe('Why the card could not be read (its readings are then absent)'),
  utilization: z.number().optional().describe('Share (0-1) of the last sample period in which a kernel ran'),
  memory_used_bytes: z.number().optional(),
  memory_total_bytes: z.number().optional(),
  decoder_utilization: z.number().optional().describe('Share (0-1) of the last sample period NVDEC was busy'),
  power_watts: z.number().optional(),
  temperature_celsius: z.number().optional(),
});
const GpuListOut = z.object({
  object: z.literal('list'),
  data: z.array(GpuOut),
  available: z.boolean().describe("Whether the driver's management library answered on this node"),
  reason: z.string().nullable().describe('Why not, when it did not (no driver, a driver that did not start)'),
  driver_version: z.string().nullable(),
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
      path: '/admin/v1/gpus',
      auth: 'admin',
      summary:
        "This node's NVIDIA cards now, from the driver's management library: utilisation, memory, NVDEC, power, temperature (an empty list without a driver)",
      tags: ['admin'],
      noBody: true,
      responses: { 200: { description: 'The cards', schema: GpuListOut } },
      handler: async () => {
        const g = await s.gpus();
        return {
          json: {
            object: 'list',
            data: g.devices.map((d) => ({
              object: 'gpu',
              index: d.index,
              uuid: d.uuid,
              name: d.name,
              error: d.error,
              utilization: d.utilization,
              memory_used_bytes: d.memoryUsedBytes,
              memory_total_bytes: d.memoryTotalBytes,
              decoder_utilization: d.decoderUtilization,
              power_watts: d.powerWatts,
              temperature_celsius: d.temperatureCelsius,
            })),
            available: g.available,
            reason: g.reason ?? null,
            driver_version: g.driverVersion ?? null,
          },
        };
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
