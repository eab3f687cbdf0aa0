// The analytics endpoints' bodies and answers (GET/PUT /v1/video/tasks/:id/analytics, POST .../recount in
// video.routes.ts; docs/analytics.md).
import { z } from 'zod';
import { AnalyticsParameters } from './rules.schema.js';

export const AnalyticsRulesBody = z.strictObject({ parameters: AnalyticsParameters });
export const AnalyticsRecountBody = z.strictObject({
  parameters: AnalyticsParameters.optional().meta({ description: 'Rules to count with; default the task\'s current rules' }),
});

export const AnalyticsSummarySchema = z.object({
  version: z.number().int(),
  lines: z.record(z.string(), z.record(z.string(), z.unknown())).meta({ description: '{in, out, active, by_class: {<class>: {in, out}}, buckets: [{start_ms, in, out}], speed_kmh?}' }),
  zones: z.record(z.string(), z.record(z.string(), z.unknown())).meta({ description: '{entered, exited, occupancy, max_occupancy, active, dwell_ms: {count, p50, p95, max, mean}, by_class, buckets}' }),
  transitions: z.record(z.string(), z.record(z.string(), z.number().int())).meta({ description: 'transitions[from][to]: tracks last in zone `from` that then entered `to`' }),
});

export const AnalyticsViewSchema = z.object({
  object: z.literal('video.analytics'),
  task_id: z.string(),
  status: z.string(),
  version: z.number().int().meta({ description: '1 for the rules the task started with, + 1 for each PUT' }),
  parameters: AnalyticsParameters,
  totals: AnalyticsSummarySchema.nullable().meta({ description: 'null until the worker saved its first totals (about once a second)' }),
});

export const AnalyticsRecountSchema = z.object({
  object: z.literal('video.analytics.recount'),
  task_id: z.string(),
  parameters: AnalyticsParameters,
  frames: z.number().int(),
  events: z.number().int(),
  totals: AnalyticsSummarySchema,
  recount_ms: z.number().int(),
});
