// A task's result stream as parsed chunks, resumed across dropped connections by byte offset until
// `data: [DONE]` (docs/video.md, "The stream"). The archive is the same bytes for every reader, so the
// offset to resume at is the count of bytes of whole events already handed out: a cut in the middle of an
// event re-reads that event from its first byte, and nothing is yielded twice or skipped. A connection that
// made progress before it dropped is reopened at once; one that made none counts as a failed attempt and
// waits the usual backoff, and `maxRetries` failures in a row end the stream with a StreamError.
import { retryDelayMs, type Transport } from './core.js';
import { APIUserAbortError, StreamError } from './errors.js';
import type { Chunk } from './generated/api.js';

/** One archived chunk of a task's stream (`object: "mm.pipeline.chunk"`): the document's Chunk schema. */
export type TaskChunk = Chunk;

export interface StreamOptions {
  /** Archive byte offset to start at (default 0: the whole stream). */
  offset?: number;
  signal?: AbortSignal;
  /** Reconnects in a row that receive nothing before the stream gives up (default: the client's maxRetries + 3). */
  maxRetries?: number;
  /** Called before each reconnect with the offset it resumes at. */
  onResume?: (offset: number) => void;
}

const NL = 10;

function findEventEnd(buf: Uint8Array, from: number): number {
  for (let i = Math.max(from, 1); i < buf.length; i++) if (buf[i] === NL && buf[i - 1] === NL) return i + 1;
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The `data:` of one SSE event block, or null for a comment-only block (a heartbeat). */
function eventData(block: string): string | null {
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return data.length ? data.join('\n') : null;
}

/**
 * Yields the task's chunks in order, each once, from `offset` to `[DONE]`. `position()` is the archive
 * offset after the last yielded event (what to resume at later).
 */
export class TaskStream implements AsyncIterable<TaskChunk> {
  private offset: number;
  /** Times the stream was reopened after a drop. */
  resumes = 0;

  constructor(
    private readonly transport: Transport,
    readonly taskId: string,
    private readonly opts: StreamOptions = {},
  ) {
    this.offset = opts.offset ?? 0;
  }

  position(): number {
    return this.offset;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TaskChunk> {
    const maxFailures = this.opts.maxRetries ?? this.transport.maxRetries + 3;
    const decoder = new TextDecoder();
    let failures = 0;
    for (let opened = 0; ; opened++) {
      if (this.opts.signal?.aborted) throw new APIUserAbortError('Stream was aborted');
      if (opened > 0) {
        this.resumes++;
        this.opts.onResume?.(this.offset);
      }
      const conn = new AbortController();
      const signal = this.opts.signal ? AbortSignal.any([this.opts.signal, conn.signal]) : conn.signal;
      const startedAt = this.offset;
      let res: Response;
      try {
        res = await this.transport.request<Response>(
          {
            method: 'GET',
            path: '/v1/video/tasks/{id}/stream',
            pathParams: { id: this.taskId },
            query: { offset: this.offset },
            raw: true,
          },
          { signal, maxRetries: 0 },
        );
      } catch (err) {
        if (this.opts.signal?.aborted || !isTransient(err)) throw err;
        if (++failures > maxFailures)
          throw new StreamError(`Stream of ${this.taskId} could not be resumed at offset ${this.offset}`, {
            cause: err,
          });
        await sleep(retryDelayMs(failures - 1, retryAfter(err)), this.opts.signal);
        continue;
      }
      const reader = res.body!.getReader();
      let buf: Uint8Array = new Uint8Array(0);
      let scanned = 0;
      // A connection that delivers nothing for the client's timeout is dead (idle streams get heartbeat
      // comments well within it): drop it and resume.
      let idle = setTimeout(() => conn.abort(), this.transport.timeout);
      try {
        for (;;) {
          let r: ReadableStreamReadResult<Uint8Array>;
          try {
            r = await reader.read();
          } catch (err) {
            if (this.opts.signal?.aborted) throw new APIUserAbortError('Stream was aborted', { cause: err });
            break;
          }
          clearTimeout(idle);
          idle = setTimeout(() => conn.abort(), this.transport.timeout);
          if (r.done) break;
          buf = concat(buf, r.value);
          for (;;) {
            const end = findEventEnd(buf, scanned);
            if (end < 0) {
              scanned = Math.max(0, buf.length - 1);
              break;
            }
            const block = decoder.decode(buf.subarray(0, end - 2));
            buf = buf.subarray(end);
            scanned = 0;
            this.offset += end;
            const data = eventData(block);
            if (data === null) continue;
            if (data === '[DONE]') return;
            failures = 0;
            yield JSON.parse(data) as TaskChunk;
          }
        }
      } finally {
        clearTimeout(idle);
        conn.abort();
        reader.releaseLock();
      }
      // Ended or cut without [DONE]: resume where the last whole event ended.
      if (this.offset === startedAt) {
        if (++failures > maxFailures)
          throw new StreamError(
            `Stream of ${this.taskId} ended ${failures} times in a row at offset ${this.offset} without [DONE]`,
          );
        await sleep(retryDelayMs(failures - 1, null), this.opts.signal);
      } else {
        failures = 0;
      }
    }
  }
}

function isTransient(err: unknown): boolean {
  const e = err as { name?: string; status?: number };
  if (e?.name === 'APIConnectionError' || e?.name === 'APITimeoutError') return true;
  return typeof e?.status === 'number' && (e.status === 408 || e.status === 429 || e.status >= 500);
}

function retryAfter(err: unknown): number | null {
  const h = (err as { headers?: Headers })?.headers;
  const v = h?.get?.('retry-after');
  return v && /^\d+$/.test(v) ? Number(v) : null;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError('Stream was aborted'));
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError('Stream was aborted'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
