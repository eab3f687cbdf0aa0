// /v1/video/* (docs/video.md): thin adapters over TasksService (tasks/tasks.service.ts), the
// stream pump and the analytics step's service (pipeline/analytics/analytics.service.ts, docs/analytics.md:
// totals, rule changes, recount, heatmap). Every route is project-scoped: another project's task id answers 404. POST /process honours
// Idempotency-Key (http/idempotency.ts): a retried request gets the first task back instead of a second one.
import type { z } from 'zod';
import { defineRoute, type RequestContext, type RouteDef } from '../http/route.js';
import type { Services } from '../services.js';
import { GetQuery, ListQuery, ProcessBody, StreamChunk, StreamQuery, TaskCreated, TaskList, TaskRecord, TaskResults } from './schemas.js';
import type { TaskStore, ListFilters } from './tasks/task-store.js';
import type { TasksService } from './tasks/tasks.service.js';
import { streamTask, type Subscriptions } from './stream/stream.js';
import type { StreamArchive } from './stream/stream-archive.js';
import type { StreamHub } from './stream/stream-hub.js';
import type { FinishedArchiveCache } from './stream/archive-cache.js';
import type { StreamFanout } from './stream/stream-fanout.js';
import { idempotent } from '../http/idempotency.js';
import type { AnalyticsService } from './analytics/analytics.service.js';
import { AnalyticsRecountBody, AnalyticsRecountSchema, AnalyticsRulesBody, AnalyticsViewSchema, HeatmapPng, HeatmapQuery } from './analytics/analytics.schemas.js';

export interface VideoRouteDeps { tasks: TasksService; analytics: AnalyticsService; store: TaskStore; archive: StreamArchive; subs: Subscriptions; cache: FinishedArchiveCache; fanout: StreamFanout }

export function videoRoutes(s: Services, d: VideoRouteDeps): RouteDef[] {
  const tags = ['video'];
  const notFound = { 404: { description: 'No such task in this project (not_found_error)' } };
  const unavailable = { 409: { description: 'analytics_unavailable: see the message' } };
  return [
    idempotent(s.db, defineRoute({
      method: 'POST', path: '/v1/video/process', auth: 'key', tags, body: ProcessBody,
      summary: 'Enqueue a video task (one input element in v1); base64 input is staged before any worker reads it',
      responses: {
        202: { description: 'Accepted: {id, status, stream_url}, plus webhook {url, secret} when a webhook was asked for without a secret', schema: TaskCreated },
        400: { description: 'Invalid body, input, URL (url_not_allowed; image_fetch_failed when its host does not resolve) or base64 (invalid_base64)' },
        413: { description: 'Body over 30 MB or decoded video_base64 over 20 MB (payload_too_large)' },
      },
      handler: async (ctx: RequestContext<ProcessBody>) => ({ status: 202, json: await d.tasks.create({ ...ctx.principal, traceparent: ctx.traceparent }, ctx.body) }),
    })),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks', auth: 'key', tags, query: ListQuery,
      summary: 'List the project\'s video tasks, newest first (status, from, to, cursor, limit)',
      responses: { 200: { description: '{object: "list", data, has_more, next_cursor}', schema: TaskList }, 400: { description: 'Bad filter or cursor' } },
      handler: async (ctx: RequestContext<unknown, ListFilters>) => ({ json: await d.tasks.list(ctx.principal, ctx.query) }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id', auth: 'key', tags, query: GetQuery,
      summary: 'A video task\'s status record (include=request echoes the body, include=webhook_deliveries lists webhook deliveries)',
      responses: { 200: { description: 'Task record', schema: TaskRecord }, 400: { description: 'Unknown include' }, ...notFound },
      handler: async (ctx: RequestContext<unknown, { include?: string }>) => ({ json: await d.tasks.get(ctx.principal, ctx.params.id!, ctx.query.include) }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/stream', auth: 'key', tags, query: StreamQuery,
      summary: 'Server-sent events: archived chunks from a byte offset (Last-Event-ID or ?offset=), then live ones',
      responses: {
        200: {
          description: 'text/event-stream; X-Stream-Offset says where this response starts (an archive byte offset). '
            + 'With ?event_ids=true every event carries `id: <n>`, n being the archive byte offset right after it, and the response opens with `retry: 1000`: '
            + 'a standard EventSource sends n back as Last-Event-ID on reconnect and resumes at the next event, without gap or duplicate. '
            + 'Without it the bytes are exactly the archive (resume with Last-Event-ID or ?offset= set to the bytes received). '
            + 'A reader of a live task whose connection takes no byte for SIGHTFLOW_VIDEO_STREAM_STALL_MS (default 30 s) is cut off: the response ends after a whole event '
            + 'without `data: [DONE]`; resume from the bytes received (docs/video.md, "Live readers").',
          schema: StreamChunk, contentType: 'text/event-stream',
        },
        400: { description: 'Offset not a non-negative integer, or event_ids not true/false' },
        416: { description: 'Offset beyond the end of a finished task (offset_out_of_range)' },
        ...notFound,
      },
      handler: async (ctx) => {
        await streamTask(ctx, { s, store: d.store, archive: d.archive, subs: d.subs, cache: d.cache, fanout: d.fanout });
        return { handled: true };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/results', auth: 'key', tags,
      summary: 'Per-track summary of a succeeded task (404 until it has succeeded)',
      responses: { 200: { description: 'mm.pipeline.result', schema: TaskResults }, ...notFound },
      handler: async (ctx) => ({ json: await d.tasks.results(ctx.principal, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'POST', path: '/v1/video/tasks/:id/cancel', auth: 'key', tags, noBody: true,
      summary: 'Cancel: pending -> cancelled at once; running/streaming -> cancelling, cancelled at the next chunk boundary',
      responses: {
        202: { description: 'The task record (idempotent for cancelling/cancelled tasks)', schema: TaskRecord },
        409: { description: 'The task already succeeded or failed (conflict_error)' },
        ...notFound,
      },
      handler: async (ctx) => ({ status: 202, json: await d.tasks.cancel(ctx.principal, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/analytics', auth: 'key', tags,
      summary: 'A task\'s analytics totals so far (running tasks too), without reading its stream',
      responses: { 200: { description: 'video.analytics', schema: AnalyticsViewSchema }, ...notFound, ...unavailable },
      handler: async (ctx) => ({ json: await d.analytics.get(ctx.principal.projectId, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'PUT', path: '/v1/video/tasks/:id/analytics', auth: 'key', tags, body: AnalyticsRulesBody,
      summary: 'Change the analytics rules of a pending or running task: from its next sampled frame, version + 1; totals of removed rules stay',
      responses: { 200: { description: 'video.analytics with the new version', schema: AnalyticsViewSchema }, 400: { description: 'Bad rules; param names the rule' }, ...notFound, ...unavailable },
      handler: async (ctx: RequestContext<z.infer<typeof AnalyticsRulesBody>>) => ({ json: await d.analytics.put(ctx.principal.projectId, ctx.params.id!, ctx.body.parameters) }),
    }),
    defineRoute({
      method: 'POST', path: '/v1/video/tasks/:id/analytics/recount', auth: 'key', tags, body: AnalyticsRecountBody,
      summary: 'Count a finished task\'s stored tracks again (no decoding), with new rules or its own',
      responses: { 200: { description: 'video.analytics.recount', schema: AnalyticsRecountSchema }, 400: { description: 'Bad rules; param names the rule' }, ...notFound, ...unavailable },
      handler: async (ctx: RequestContext<z.infer<typeof AnalyticsRecountBody>>) => ({ json: await d.analytics.recount(ctx.principal.projectId, ctx.params.id!, ctx.body.parameters) }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/heatmap.png', auth: 'key', tags, query: HeatmapQuery, noBody: true,
      summary: 'A PNG heatmap of where the task\'s tracks were (their anchors, one point per track and sampled frame), for a running task too',
      responses: {
        200: {
          description: 'image/png the size of the source frame (at most `width`, default 1280 wide), transparent where no track was; '
            + 'X-Heatmap-Points and X-Heatmap-Frames say how many anchors and stored frames it drew (docs/analytics.md, "Heatmap")',
          schema: HeatmapPng, contentType: 'image/png',
        },
        400: { description: 'Bad query parameter (param names it): classes, anchor, width, from_ms, to_ms; unknown_class for a class the detector does not know' },
        ...notFound,
        409: { description: 'analytics_unavailable: no tracked box yet and no recorded frame size' },
      },
      handler: async (ctx: RequestContext<unknown, HeatmapQuery>) => {
        const h = await d.analytics.heatmap(ctx.principal.projectId, ctx.params.id!, ctx.query);
        return {
          headers: { 'Content-Type': 'image/png', 'Cache-Control': 'no-store', 'X-Heatmap-Points': String(h.points), 'X-Heatmap-Frames': String(h.frames) },
          body: h.png,
        };
      },
    }),
  ];
}
