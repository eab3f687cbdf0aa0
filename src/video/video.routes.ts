// /v1/video/* (docs/api.md, "Video tasks"): thin handlers over the task store and the stream
// pump. Every route is project-scoped: another project's task id answers 404.
import { errors } from '../errors.js';
import { defineRoute, type RequestContext, type RouteDef } from '../http/route.js';
import type { Services } from '../services.js';
import { planSteps } from './pipeline/plan.js';
import { trackerSettings } from './pipeline/target-tracker.js';
import { GetQuery, ListQuery, ProcessBody, StreamChunk, StreamQuery, TaskCreated, TaskList, TaskRecord, TaskResults } from './schemas.js';
import type { TaskStore, ListFilters } from './task-store.js';
import { streamTask, type Subscriptions } from './stream.js';
import type { StreamArchive } from './stream-archive.js';
import type { StreamHub } from './stream-hub.js';
import type { FinishedArchiveCache } from './archive-cache.js';

export interface VideoRouteDeps { store: TaskStore; archive: StreamArchive; hub: StreamHub; subs: Subscriptions; cache: FinishedArchiveCache; streamPollMs: number }

export function videoRoutes(s: Services, d: VideoRouteDeps): RouteDef[] {
  const tags = ['video'];
  const notFound = { 404: { description: 'No such task in this project (not_found_error)' } };
  return [
    defineRoute({
      method: 'POST', path: '/v1/video/process', auth: 'key', tags, body: ProcessBody,
      summary: 'Enqueue a video task (one input element in v1); base64 input is staged before any worker reads it',
      responses: {
        202: { description: 'Accepted: {id, status, stream_url}', schema: TaskCreated },
        400: { description: 'Invalid body, input, URL (url_not_allowed; image_fetch_failed when its host does not resolve) or base64 (invalid_base64)' },
        413: { description: 'Body over 30 MB or decoded video_base64 over 20 MB (payload_too_large)' },
      },
      handler: async (ctx: RequestContext<ProcessBody>) => {
        // Unknown classes, feature models and tracker options are 400s now, not failed tasks later.
        planSteps(ctx.body as never, (await s.models.detector()).labels);
        trackerSettings((ctx.body as { tracker?: never }).tracker);
        const rec = await d.store.create(ctx.principal.projectId, ctx.principal.keyId, ctx.body);
        return { status: 202, json: { id: rec.id, status: rec.status, stream_url: rec.stream_url } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks', auth: 'key', tags, query: ListQuery,
      summary: 'List the project\'s video tasks, newest first (status, from, to, cursor, limit)',
      responses: { 200: { description: '{object: "list", data, has_more, next_cursor}', schema: TaskList }, 400: { description: 'Bad filter or cursor' } },
      handler: async (ctx: RequestContext<unknown, ListFilters>) => ({ json: await d.store.list(ctx.principal.projectId, ctx.query) }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id', auth: 'key', tags, query: GetQuery,
      summary: 'A video task\'s status record (include=request echoes the body)',
      responses: { 200: { description: 'Task record', schema: TaskRecord }, 400: { description: 'Unknown include' }, ...notFound },
      handler: async (ctx: RequestContext<unknown, { include?: string }>) => {
        const inc = ctx.query.include;
        if (inc !== undefined && inc !== 'request') {
          throw errors.invalidParam('include', `Expected "request" for include but received ${JSON.stringify(inc)}`);
        }
        return { json: await d.store.get(ctx.principal.projectId, ctx.params.id!, inc === 'request') };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/stream', auth: 'key', tags, query: StreamQuery,
      summary: 'Server-sent events: archived chunks from a byte offset (Last-Event-ID or ?offset=), then live ones',
      responses: {
        200: { description: 'text/event-stream; X-Stream-Offset says where this response starts', schema: StreamChunk, contentType: 'text/event-stream' },
        400: { description: 'Offset not a non-negative integer' },
        416: { description: 'Offset beyond the end of a finished task (offset_out_of_range)' },
        ...notFound,
      },
      handler: async (ctx) => {
        await streamTask(ctx, { s, store: d.store, archive: d.archive, hub: d.hub, subs: d.subs, cache: d.cache, pollMs: d.streamPollMs });
        return { handled: true };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/video/tasks/:id/results', auth: 'key', tags,
      summary: 'Per-track summary of a succeeded task (404 until it has succeeded)',
      responses: { 200: { description: 'mm.pipeline.result', schema: TaskResults }, ...notFound },
      handler: async (ctx) => ({ json: await d.store.results(ctx.principal.projectId, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'POST', path: '/v1/video/tasks/:id/cancel', auth: 'key', tags, noBody: true,
      summary: 'Cancel: pending -> cancelled at once; running/streaming -> cancelling, cancelled at the next chunk boundary',
      responses: {
        202: { description: 'The task record (idempotent for cancelling/cancelled tasks)', schema: TaskRecord },
        409: { description: 'The task already succeeded or failed (conflict_error)' },
        ...notFound,
      },
      handler: async (ctx) => ({ status: 202, json: await d.store.cancel(ctx.principal.projectId, ctx.params.id!) }),
    }),
  ];
}
