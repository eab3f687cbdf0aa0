// The analytics endpoints' bodies, queries and answers (GET/PUT /v1/video/tasks/:id/analytics, POST
// .../recount, GET .../heatmap.png in video.routes.ts; docs/analytics.md).
import { z } from 'zod';
import { expected } from '../pipeline/step-schema.js';
import { ANCHORS, AnalyticsParameters } from './rules.schema.js';
import { HEATMAP_DEFAULT_WIDTH, HEATMAP_MAX_WIDTH } from './heatmap.js';

export const AnalyticsRulesBody = z.strictObject({ parameters: AnalyticsParameters });
export const AnalyticsRecountBody = z.strictObject({
  parameters: AnalyticsParameters.optional().meta({
    description: "Rules to count with; default the task's current rules",
  }),
});

export const AnalyticsSummarySchema = z
  .object({
    version: z.number().int(),
    lines: z.record(z.string(), z.record(z.string(), z.unknown())).meta({
      description: '{in, out, active, by_class: {<class>: {in, out}}, buckets: [{start_ms, in, out}], speed_kmh?}',
    }),
    zones: z.record(z.string(), z.record(z.string(), z.unknown())).meta({
      description:
        '{entered, exited, occupancy, max_occupancy, active, dwell_ms: {count, p50, p95, max, mean}, by_class, buckets}',
    }),
    transitions: z
      .record(z.string(), z.record(z.string(), z.number().int()))
      .meta({ description: 'transitions[from][to]: tracks last in zone `from` that then entered `to`' }),
  })
  .meta({ id: 'AnalyticsTotals' });

export const AnalyticsViewSchema = z
  .object({
    object: z.literal('video.analytics'),
    task_id: z.string(),
    status: z.string(),
    version: z.number().int().meta({ description: '1 for the rules the task started with, + 1 for each PUT' }),
    parameters: AnalyticsParameters,
    totals: AnalyticsSummarySchema.nullable().meta({
      description: 'null until the worker saved its first totals (about once a second)',
    }),
    frame_size: z.object({ width: z.number().int(), height: z.number().int() }).nullable().meta({
      description:
        'The source frame size once the worker saw a frame (pixels rules and boxes are in it); null before, or when the provider does not say',
    }),
  })
  .meta({ id: 'Analytics' });

export const AnalyticsRecountSchema = z.object({
  object: z.literal('video.analytics.recount'),
  task_id: z.string(),
  parameters: AnalyticsParameters,
  frames: z.number().int(),
  events: z.number().int(),
  totals: AnalyticsSummarySchema,
  recount_ms: z.number().int(),
  source: z.enum(['track_log', 'archive']).meta({
    description:
      'What was read: the compact track log of a finished task with an analytics step, or the archived chunks',
  }),
});

const intParam = (field: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,15}$/, expected(`an integer between ${min} and ${max}`, field))
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, expected(`an integer between ${min} and ${max}`, field))
        .max(max, expected(`an integer between ${min} and ${max}`, field)),
    );
const CLASS_LIST = /^[^,]{1,64}(,[^,]{1,64}){0,63}$/;

export const HeatmapQuery = z.strictObject({
  classes: z
    .string()
    .regex(CLASS_LIST, expected('a comma list of 1-64 class names', 'classes'))
    .transform((s) => [...new Set(s.split(',').map((c) => c.trim()))])
    .optional()
    .meta({ description: 'Only these classes, a comma list (person,car); default every class' }),
  anchor: z
    .enum(ANCHORS, expected(`one of ${ANCHORS.join(', ')}`, 'anchor'))
    .optional()
    .meta({ description: 'The point of each box that is counted; default bottom_center (the feet)' }),
  width: intParam('width', 16, HEATMAP_MAX_WIDTH)
    .optional()
    .meta({
      description: `The image width (the height keeps the frame's aspect); default the source frame's width up to ${HEATMAP_DEFAULT_WIDTH}, never wider than the source`,
    }),
  from_ms: intParam('from_ms', 0, 1e15)
    .optional()
    .meta({ description: 'Only frames at or after this stream time (ms)' }),
  to_ms: intParam('to_ms', 0, 1e15).optional().meta({ description: 'Only frames before this stream time (ms)' }),
});
export type HeatmapQuery = z.infer<typeof HeatmapQuery>;
export const HeatmapPng = z
  .string()
  .meta({ format: 'binary', description: 'A PNG, RGBA, transparent where no track was' });
