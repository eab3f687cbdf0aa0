// The analytics room's routes (docs/analytics.md): totals so far, rule changes on a running task, a recount of a
// finished one and the heatmap, under /v1/video/tasks/:id/, project-scoped like every video route.
import type { z } from 'zod';
import { defineRoute, type RequestContext, type RouteDef } from '../../http/route.js';
import type { AnalyticsService } from './analytics.service.js';
import {
  AnalyticsRecountBody,
  AnalyticsRecountSchema,
  AnalyticsRulesBody,
  AnalyticsViewSchema,
  HeatmapPng,
  HeatmapQuery,
} from './analytics.schemas.js';

export function analyticsRoutes(d: { analytics: AnalyticsService }): RouteDef[] {
  const tags = ['video'];
  const notFound = { 404: { description: 'No such task in this project (not_found_error)' } };
  const unavailable = { 409: { description: 'analytics_unavailable: see the message' } };
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks/:id/analytics',
      auth: 'key',
      tags,
      summary: "A task's analytics totals so far (running tasks too), without reading its stream",
      responses: { 200: { description: 'video.analytics', schema: AnalyticsViewSchema }, ...notFound, ...unavailable },
      handler: async (ctx) => ({ json: await d.analytics.get(ctx.principal.projectId, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/video/tasks/:id/analytics',
      auth: 'key',
      tags,
      body: AnalyticsRulesBody,
      summary:
        'Change the analytics rules of a pending or running task: from its next sampled frame, version + 1; totals of removed rules stay',
      responses: {
        200: { description: 'video.analytics with the new version', schema: AnalyticsViewSchema },
        400: { description: 'Bad rules; param names the rule' },
        ...notFound,
        ...unavailable,
      },
      handler: async (ctx: RequestContext<z.infer<typeof AnalyticsRulesBody>>) => ({
        json: await d.analytics.put(ctx.principal.projectId, ctx.params.id!, ctx.body.parameters),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/video/tasks/:id/analytics/recount',
      auth: 'key',
      tags,
      body: AnalyticsRecountBody,
      summary: "Count a finished task's stored tracks again (no decoding), with new rules or its own",
      responses: {
        200: { description: 'video.analytics.recount', schema: AnalyticsRecountSchema },
        400: { description: 'Bad rules; param names the rule' },
        ...notFound,
        ...unavailable,
      },
      handler: async (ctx: RequestContext<z.infer<typeof AnalyticsRecountBody>>) => ({
        json: await d.analytics.recount(ctx.principal.projectId, ctx.params.id!, ctx.body.parameters),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks/:id/heatmap.png',
      auth: 'key',
      tags,
      query: HeatmapQuery,
      noBody: true,
      summary:
        "A PNG heatmap of where the task's tracks were (their anchors, one point per track and sampled frame), for a running task too",
      responses: {
        200: {
          description:
            'image/png the size of the source frame (at most `width`, default 1280 wide), transparent where no track was; ' +
            'X-Heatmap-Points and X-Heatmap-Frames say how many anchors and stored frames it drew (docs/analytics.md, "Heatmap")',
          schema: HeatmapPng,
          contentType: 'image/png',
        },
        400: {
          description:
            'Bad query parameter (param names it): classes, anchor, width, from_ms, to_ms; unknown_class for a class the detector does not know',
        },
        ...notFound,
        409: { description: 'analytics_unavailable: no tracked box yet and no recorded frame size' },
      },
      handler: async (ctx: RequestContext<unknown, HeatmapQuery>) => {
        const h = await d.analytics.heatmap(ctx.principal.projectId, ctx.params.id!, ctx.query);
        return {
          headers: {
            'Content-Type': 'image/png',
            'Cache-Control': 'no-store',
            'X-Heatmap-Points': String(h.points),
            'X-Heatmap-Frames': String(h.frames),
          },
          body: h.png,
        };
      },
    }),
  ];
}
