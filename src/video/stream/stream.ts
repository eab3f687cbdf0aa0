// GET /v1/video/tasks/:id/stream: the archive from byte n, then live bytes as they are appended, for as long
// as the task is not terminal. n comes from `?offset=` or `Last-Event-ID`; the response says where it starts
// (`X-Stream-Offset`). A finished task is replayed here (its archive cached in memory, archive-cache.ts); a
// live one is served by the process's fan-out (stream-fanout.ts), whose cost to the task does not grow with
// its readers, and which cuts off a reader whose socket takes nothing for the stall limit. With
// `?event_ids=true` every event also carries `id: <offset after it>` (event-ids.ts) and the response opens
// with a `retry:` block, so a standard EventSource resumes exactly; offsets keep counting archive bytes.
import { errors } from '../../base/errors.js';
import type { RequestContext } from '../../http/route.js';
import type { SseWriter } from '../../http/sse.js';
import type { Services } from '../../services/services.js';
import { TERMINAL_STATES, type TaskState } from '../task-contract.js';
import type { StreamArchive } from './stream-archive.js';
import { WRITE_SLICE, type StreamFanout } from './stream-fanout.js';
import type { FinishedArchiveCache } from './archive-cache.js';
import { EventIdWriter } from './event-ids.js';
import { countResume } from '../../metrics/video.js';

/** Offset from `?offset=` (wins) or `Last-Event-ID`: a non-negative integer byte count. */
export function requestedOffset(ctx: RequestContext): number {
  const q = ctx.rawQuery.get('offset');
  const h = ctx.headers['last-event-id'];
  const raw = q ?? h;
  if (raw === undefined || raw === null || raw === '') return 0;
  const param = q !== null ? 'offset' : 'Last-Event-ID';
  if (!/^\d{1,15}$/.test(raw.trim()))
    throw errors.invalidParam(
      param,
      `Expected a byte offset (an integer >= 0) for ${param} but received ${JSON.stringify(raw)}`,
    );
  return Number(raw.trim());
}

/** `?event_ids=true|false` (default false): whether events carry ids derived from archive offsets. */
export function wantsEventIds(ctx: RequestContext): boolean {
  const raw = ctx.rawQuery.get('event_ids');
  if (raw === null || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw errors.invalidParam('event_ids', `Expected true or false for event_ids but received ${JSON.stringify(raw)}`);
}

/** Open subscriptions of this process, ended when the module stops. */
export class Subscriptions {
  private readonly open = new Set<SseWriter>();
  add(w: SseWriter): void {
    this.open.add(w);
  }
  get count(): number {
    return this.open.size;
  }
  delete(w: SseWriter): void {
    this.open.delete(w);
  }
  closeAll(): void {
    for (const w of this.open) w.end();
    this.open.clear();
  }
}

/** Where the stream route reads a task's state (the task store, tasks/task-store.ts, handed over by the shell). */
export interface TaskStates {
  /** The task's state and archive size; a 404 ApiError for another project's or an unknown task. */
  state(projectId: string, id: string): Promise<{ status: TaskState; streamBytes: number }>;
}

export interface StreamDeps {
  s: Services;
  store: TaskStates;
  archive: StreamArchive;
  subs: Subscriptions;
  cache: FinishedArchiveCache;
  fanout: StreamFanout;
}

export async function streamTask(ctx: RequestContext, deps: StreamDeps): Promise<void> {
  const id = ctx.params.id!;
  const offset = requestedOffset(ctx);
  const ids = wantsEventIds(ctx) ? new EventIdWriter(offset) : null;
  if (offset > 0) countResume();
  const first = await deps.store.state(ctx.principal.projectId, id);
  const finished = TERMINAL_STATES.includes(first.status);
  if (finished && offset > first.streamBytes) throw errors.offsetOutOfRange(offset, first.streamBytes);

  const writer = ctx.sse();
  writer.open({ 'X-Stream-Offset': String(offset), 'x-request-id': ctx.requestId });
  deps.subs.add(writer);
  if (!finished) {
    if (ids && !writer.send(EventIdWriter.preamble()) && writer.closed) {
      deps.subs.delete(writer);
      return;
    }
    deps.fanout.join(id, writer, offset, ids, () => deps.subs.delete(writer));
    return;
  }
  // Runs after the handler returned {handled: true}; it must never throw into the server.
  void (async () => {
    try {
      if (ids && !(await writer.write(EventIdWriter.preamble()))) return;
      const end = first.streamBytes;
      if (offset >= end) return;
      const send = async (bytes: Buffer) => {
        for (let i = 0; i < bytes.length; i += WRITE_SLICE) {
          const slice = bytes.subarray(i, i + WRITE_SLICE);
          if (!(await writer.write(ids ? ids.transform(slice) : slice))) return false;
        }
        return true;
      };
      if (end <= deps.cache.maxEntryBytes) {
        await send((await deps.cache.get(id, end, () => readWhole(deps.archive, id, end))).subarray(offset));
        return;
      }
      // Too large to cache: a batch of rows at a time, each written before the next is read.
      for (let pos = offset; pos < end; ) {
        const { bytes } = await deps.archive.read(id, pos);
        if (bytes.length === 0 || !(await send(bytes))) return;
        pos += bytes.length;
      }
    } catch (e) {
      ctx.log.warn({ err: e, taskId: id }, 'video stream subscriber failed');
    } finally {
      deps.subs.delete(writer);
      writer.end();
    }
  })();
}

async function readWhole(archive: StreamArchive, id: string, end: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let pos = 0;
  while (pos < end) {
    const { bytes } = await archive.read(id, pos);
    if (bytes.length === 0) break;
    parts.push(bytes);
    pos += bytes.length;
  }
  return Buffer.concat(parts);
}
