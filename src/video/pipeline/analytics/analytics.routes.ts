// /v1/video/tasks/:id/analytics (docs/api.md, "Analytics"): totals so far, a rule change on a running task,
// and a recount of a finished task from its stored tracks. Thin adapters over AnalyticsService.
import { z } from 'zod';
import { defineRoute, type RequestContext, type RouteDef } from '../../../http/route.js';
import { AnalyticsParameters } from './rules.schema.js';
import type { AnalyticsService } from './analytics.service.js';

const RulesBody = z.strictObject({ parameters: AnalyticsParameters });
const RecountBody = z.strictObject({
  parameters: AnalyticsParameters.optional().meta({ description: 'Rules to count with; default the task\'s current rules' }),
});

const Summary = z.object({
  version: z.number().int(),
  lines: z.record(z.string(), z.record(z.string(), z.unknown())).meta({ description: '{in, out, active, by_class: {<class>: {in, out}}, buckets: [{start_ms, in, out}], speed_kmh?}' }),
  zones: z.record(z.string(), z.record(z.string(), z.unknown())).meta({ description: '{entered, exited, occupancy, max_occupancy, active, dwell_ms: {count, p50, p95, max, mean}, by_class, buckets}' }),
  transitions: z.record(z.string(), z.record(z.string(), z.number().int())).meta({ description: 'transitions[from][to]: tracks last in zone `from` that then entered `to`' }),
});

const View = z.object({
  object: z.literal('video.analytics'),
  task_id: z.string(),
  status: z.string(),
  version: z.number().int().meta({ description: '1 for the rules the task started with, + 1 for each PUT' }),
  parameters: AnalyticsParameters,
  totals: Summary.nullable().meta({ description: 'null until the worker saved its first totals (about once a second)' }),
});

const Recount = z.object({
  object: z.literal('video.analytics.recount'),
  task_id: z.string(),
  parameters: AnalyticsParameters,
  frames: z.number().int(),
  events: z.number().int(),
  totals: Summary,
  recount_ms: z.number().int(),
});

export function analyticsRoutes(service: AnalyticsService): RouteDef[] {
  const tags = ['video'];
  const notFound = { 404: { description: 'No such task in this project (not_found_error)' } };
  const unavailable = { 409: { description: 'analytics_unavailable: see the message' } };
  return [
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/analytics', auth: 'key', tags,
      summary: 'A task\'s analytics totals so far (running tasks too), without reading its stream',
      responses: { 200: { description: 'video.analytics', schema: View }, ...notFound, ...unavailable },
      handler: async (ctx) => ({ json: await service.get(ctx.principal.projectId, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'PUT', path: '/v1/video/tasks/:id/analytics', auth: 'key', tags, body: RulesBody,
      summary: 'Change the analytics rules of a pending or running task: from its next sampled frame, version + 1; totals of removed rules stay',
      responses: { 200: { description: 'video.analytics with the new version', schema: View }, 400: { description: 'Bad rules; param names the rule' }, ...notFound, ...unavailable },
      handler: async (ctx: RequestContext<z.infer<typeof RulesBody>>) => ({ json: await service.put(ctx.principal.projectId, ctx.params.id!, ctx.body.parameters) }),
    }),
    defineRoute({
      method: 'POST', path: '/v1/video/tasks/:id/analytics/recount', auth: 'key', tags, body: RecountBody,
      summary: 'Count a finished task\'s stored tracks again (no decoding), with new rules or its own',
      responses: { 200: { description: 'video.analytics.recount', schema: Recount }, 400: { description: 'Bad rules; param names the rule' }, ...notFound, ...unavailable },
      handler: async (ctx: RequestContext<z.infer<typeof RecountBody>>) => ({ json: await service.recount(ctx.principal.projectId, ctx.params.id!, ctx.body.parameters) }),
    }),
  ];
}
