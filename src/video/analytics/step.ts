// The analytics step (docs/analytics.md): counts line crossings, zone visits, dwell, crowding and speed on the
// tracks of the detect step before it. It has no work inside the frame pipeline: its worker hooks run
// in the worker over each whole frame's tracks after the other steps, whichever provider ran them (so a
// remote node's frames are counted the same), keep the task's rules and totals in its analytics row, take
// rule changes while the task runs and add the summary to the results and the terminal chunk.
import { z } from 'zod';
import { errors } from '../../base/errors.js';
import { defineStep } from '../pipeline/step.js';
import { sql } from './analytics.sql.js';
import { parseAnalytics } from './rules.js';
import { AnalyticsParameters } from './rules.schema.js';
import { TaskAnalytics } from './task-analytics.js';
import { EVENT_TYPES } from './events.js';

export const analyticsStep = defineStep({
  name: 'analytics',
  schema: z
    .strictObject({
      model: z.literal('analytics'),
      parameters: AnalyticsParameters,
    })
    .meta({
      description:
        'Counting lines, zones, dwell, crowding and speed on the tracks of the detect step before it (docs/analytics.md)',
    }),
  // Every field of the rules; parseAnalytics checks them as a whole.
  parameters: Object.keys(AnalyticsParameters.shape),
  plan({ index, params, before }) {
    // Counts the tracks of the detect step before it (its detector's labels check `classes`); one per task.
    const source = before.findLast((p) => p.labels !== undefined);
    if (!source)
      throw errors.invalidParam(
        `steps[${index}].model`,
        `Expected a detect step before the analytics step steps[${index}] (it counts tracked detections)`,
      );
    if (before.some((p) => p.kind === 'analytics'))
      throw errors.invalidParam(`steps[${index}].model`, 'Expected at most one analytics step');
    parseAnalytics(params, `steps[${index}].parameters`, source.labels);
    return { kind: 'analytics', index, produces: false, open: () => ({}) };
  },
  api: {
    webhookEvents: EVENT_TYPES,
    results: {
      analytics: z
        .record(z.string(), z.unknown())
        .optional()
        .meta({ description: 'With an analytics step: {version, lines, zones, transitions} (docs/analytics.md)' }),
    },
    chunk: {
      analytics: z
        .object({ events: z.array(z.record(z.string(), z.unknown())), totals: z.record(z.string(), z.unknown()) })
        .optional()
        .meta({
          description:
            "With an analytics step: this frame's events and the running totals; the terminal chunk carries the full summary",
        }),
    },
  },
  worker: {
    async created(q, taskId, index, body) {
      const params = parseAnalytics(body.steps[index]?.parameters, 'parameters');
      const events = body.webhook?.events;
      await q.query(sql.create, [taskId, JSON.stringify(params), events ? JSON.stringify(events) : null]);
    },
    open: ({ s, taskId, request }) => TaskAnalytics.start(s, taskId, request),
  },
});
