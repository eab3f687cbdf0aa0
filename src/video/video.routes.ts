// /v1/video/* (docs/video.md): thin adapters over TasksService (tasks/tasks.service.ts) and the stream pump.
// Rooms with an API of their own (analytics/) add their routes under /v1/video/tasks/:id/ themselves. Every
// route is project-scoped: another project's task id answers 404. POST /process honours Idempotency-Key
// (http/idempotency.ts): a retried request gets the first task back instead of a second one.
import { defineRoute, type RequestContext, type RouteDef } from '../http/route.js';
import type { Services } from '../services/services.js';
import {
  GetQuery,
  ListQuery,
  ProcessBody,
  StreamChunk,
  StreamQuery,
  TaskCreated,
  TaskList,
  TaskRecord,
  TaskResults,
} from './schemas.js';
import type { TaskStore, ListFilters } from './tasks/task-store.js';
import type { TasksService } from './tasks/tasks.service.js';
import { streamTask, type Subscriptions } from './stream/stream.js';
import type { StreamArchive } from './stream/stream-archive.js';
import type { FinishedArchiveCache } from './stream/archive-cache.js';
import type { StreamFanout } from './stream/stream-fanout.js';
import { idempotent } from '../http/idempotency.js';

export interface VideoRouteDeps {
  tasks: TasksService;
  store: TaskStore;
  archive: StreamArchive;
  subs: Subscriptions;
  cache: FinishedArchiveCache;
  fanout: StreamFanout;
}

export function videoRoutes(s: Services, d: VideoRouteDeps): RouteDef[] {
  const tags = ['video'];
  const notFound = { 404: { description: 'No such task in this project (not_found_error)' } };
  return [
    idempotent(
      s.db,
      defineRoute({
        method: 'POST',
        path: '/v1/video/process',
        auth: 'key',
        tags,
        body: ProcessBody,
        summary: 'Enqueue a video task (one input element in v1); base64 input is staged before any worker reads it',
        responses: {
          202: {
            description:
              'Accepted: {id, status, stream_url}, plus webhook {url, secret} when a webhook was asked for without a secret',
            schema: TaskCreated,
          },
          400: {
            description:
              'Invalid body, input, URL (url_not_allowed; image_fetch_failed when its host does not resolve) or base64 (invalid_base64)',
          },
          413: { description: 'Body over 30 MB or decoded video_base64 over 20 MB (payload_too_large)' },
        },
        handler: async (ctx: RequestContext<ProcessBody>) => ({
          status: 202,
          json: await d.tasks.create({ ...ctx.principal, traceparent: ctx.traceparent }, ctx.body),
        }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks',
      auth: 'key',
      tags,
      query: ListQuery,
      summary: "List the project's video tasks, newest first (status, from, to, cursor, limit)",
      responses: {
        200: { description: '{object: "list", data, has_more, next_cursor}', schema: TaskList },
        400: { description: 'Bad filter or cursor' },
      },
      handler: async (ctx: RequestContext<unknown, ListFilters>) => ({
        json: await d.tasks.list(ctx.principal, ctx.query),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks/:id',
      auth: 'key',
      tags,
      query: GetQuery,
      summary:
        "A video task's status record (include=request echoes the body, include=webhook_deliveries lists webhook deliveries)",
      responses: {
        200: { description: 'Task record', schema: TaskRecord },
        400: { description: 'Unknown include' },
        ...notFound,
      },
      handler: async (ctx: RequestContext<unknown, { include?: string }>) => ({
        json: await d.tasks.get(ctx.principal, ctx.params.id!, ctx.query.include),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks/:id/stream',
      auth: 'key',
      tags,
      query: StreamQuery,
      summary: 'Server-sent events: archived chunks from a byte offset (Last-Event-ID or ?offset=), then live ones',
      responses: {
        200: {
          description:
            'text/event-stream; X-Stream-Offset says where this response starts (an archive byte offset). ' +
            'With ?event_ids=true every event carries `id: <n>`, n being the archive byte offset right after it, and the response opens with `retry: 1000`: ' +
            'a standard EventSource sends n back as Last-Event-ID on reconnect and resumes at the next event, without gap or duplicate. ' +
            'Without it the bytes are exactly the archive (resume with Last-Event-ID or ?offset= set to the bytes received). ' +
            'A reader of a live task whose connection takes no byte for SIGHTFLOW_VIDEO_STREAM_STALL_MS (default 30 s) is cut off: the response ends after a whole event ' +
            'without `data: [DONE]`; resume from the bytes received (docs/video.md, "Live readers").',
          schema: StreamChunk,
          contentType: 'text/event-stream',
        },
        400: { description: 'Offset not a non-negative integer, or event_ids not true/false' },
        416: { description: 'Offset beyond the end of a finished task (offset_out_of_range)' },
        ...notFound,
      },
      handler: async (ctx) => {
        await streamTask(ctx, {
          s,
          store: d.store,
          archive: d.archive,
          subs: d.subs,
          cache: d.cache,
          fanout: d.fanout,
        });
        return { handled: true };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks/:id/results',
      auth: 'key',
      tags,
      summary: 'Per-track summary of a succeeded task (404 until it has succeeded)',
      responses: { 200: { description: 'mm.pipeline.result', schema: TaskResults }, ...notFound },
      handler: async (ctx) => ({ json: await d.tasks.results(ctx.principal, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/video/tasks/:id/cancel',
      auth: 'key',
      tags,
      noBody: true,
      summary:
        'Cancel: pending -> cancelled at once; running/streaming -> cancelling, cancelled at the next chunk boundary',
      responses: {
        202: { description: 'The task record (idempotent for cancelling/cancelled tasks)', schema: TaskRecord },
        409: { description: 'The task already succeeded or failed (conflict_error)' },
        ...notFound,
      },
      handler: async (ctx) => ({ status: 202, json: await d.tasks.cancel(ctx.principal, ctx.params.id!) }),
    }),
  ];
}
