// A provider that is another sightflow node: the task is created there over the public video API with that
// node's key, its SSE stream is read and each frame chunk re-emitted here (so our archive holds our own
// chunk bytes), and its /results give the track summary. Failures map to the provider.ts contract:
//  - HTTP 4xx/5xx on create or stream, a refused connection, or no frame within firstFrameTimeoutMs ->
//    ProviderError (the worker fails over to the next provider before our first chunk);
//  - a remote terminal chunk `error`/`cancelled` -> ProviderError carrying the remote's error.
// A dropped connection mid-stream resumes at the exact byte offset (?offset=, up to 3 times), so no frame is
// emitted twice. Cancel here (ctx.signal) aborts the stream and cancels the remote task (best effort).
// The request goes out without its `model` hint: the remote routes it with its own default list, which
// avoids loops between nodes that list each other. A staged upload (source.path) is sent as video_base64.
import { readFile } from 'node:fs/promises';
import {
  ProviderError,
  type FrameOutput,
  type ProviderContext,
  type ProviderResult,
  type StreamInfo,
  type TrackSummary,
  type VideoProvider,
  type VideoTaskRequest,
} from '../task-contract.js';
import { sseEvents } from './sse-reader.js';
import { callTraceparent } from '../../tracing/traceparent.js';

export interface RemoteProviderOptions {
  /** Base URL of the other node, e.g. https://gpu-2:8080 */
  url: string;
  /** An API key of a project on that node. */
  key: string;
  name?: string;
  /** Until the first frame arrives (create, queueing, decoder start). Default 60000. */
  firstFrameTimeoutMs?: number;
  /** Longest silence on a stream before it is reopened at its offset (the remote sends heartbeats). Default 60000. */
  idleTimeoutMs?: number;
}

interface Chunk {
  stream_info: StreamInfo;
  delta: FrameOutput['delta'];
  finish_reason: null | 'stop' | 'max_frames' | 'error' | 'cancelled';
  usage?: ProviderResult['usage'];
  error?: { code?: string; message?: string };
}

const MAX_RESUMES = 3;

export class RemoteProvider implements VideoProvider {
  readonly name: string;
  readonly #base: string;

  constructor(private readonly opts: RemoteProviderOptions) {
    this.#base = opts.url.replace(/\/+$/, '');
    this.name = opts.name ?? `remote:${this.#base}`;
  }

  async run(
    request: VideoTaskRequest,
    source: { path?: string; url?: string },
    ctx: ProviderContext,
  ): Promise<ProviderResult> {
    const started = performance.now();
    const ac = new AbortController();
    const onAbort = () => ac.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let firstTimer: NodeJS.Timeout | null = setTimeout(
      () =>
        ac.abort(
          new ProviderError(
            this.name,
            `No frame from ${this.#base} within ${this.opts.firstFrameTimeoutMs ?? 60000} ms`,
          ),
        ),
      this.opts.firstFrameTimeoutMs ?? 60000,
    );
    firstTimer.unref();
    let taskId: string | null = null;
    try {
      const created = await this.#json(
        'POST',
        '/v1/video/process',
        await this.#body(request, source),
        ac.signal,
        callTraceparent(ctx.traceparent),
      );
      taskId = String(created.id);
      const streamUrl =
        typeof created.stream_url === 'string' ? created.stream_url : `/v1/video/tasks/${taskId}/stream`;
      let emitted = 0;
      const terminal = await this.#stream(streamUrl, ac, async (chunk) => {
        if (firstTimer) {
          clearTimeout(firstTimer);
          firstTimer = null;
        }
        const kept = await ctx.emit({ stream_info: chunk.stream_info, delta: chunk.delta });
        emitted++;
        if (!kept) ac.abort(new DOMException('The task was cancelled', 'AbortError'));
      });
      if (terminal.finish_reason !== 'stop' && terminal.finish_reason !== 'max_frames') {
        const why = terminal.error?.message ? `: ${terminal.error.message}` : '';
        throw new ProviderError(this.name, `The remote task ${taskId} ended with ${terminal.finish_reason}${why}`);
      }
      const tracks = await this.#tracks(taskId, ac.signal);
      const usage = terminal.usage ?? {
        processed_frames: emitted,
        processing_time_ms: 0,
        decoded_frames: terminal.stream_info.decoded_frames,
        dropped_frames: terminal.stream_info.dropped_frames,
      };
      return {
        finish_reason: terminal.finish_reason,
        stream_info: terminal.stream_info,
        usage: { ...usage, processed_frames: emitted, processing_time_ms: Math.round(performance.now() - started) },
        tracks,
      };
    } catch (e) {
      if (taskId && ac.signal.aborted) void this.#cancel(taskId);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const reason = ac.signal.aborted ? ac.signal.reason : e;
      if (reason instanceof ProviderError || (reason as Error)?.name === 'AbortError') throw reason;
      throw new ProviderError(this.name, `${this.#base}: ${(reason as Error)?.message ?? String(reason)}`);
    } finally {
      if (firstTimer) clearTimeout(firstTimer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  async #body(request: VideoTaskRequest, source: { path?: string; url?: string }): Promise<unknown> {
    // This worker publishes the task's analytics (it archives the chunks): the remote node must not as well.
    const { model: _hint, publish: _publish, ...rest } = request;
    const { url: _u, data: _d, ...el } = request.input[0] ?? { type: 'video_url' as const };
    const input = source.path
      ? { ...el, type: 'video_base64', data: (await readFile(source.path)).toString('base64') }
      : { ...el, type: 'video_url', url: source.url };
    return { ...rest, input: [input] };
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.opts.key}`, ...extra };
  }

  async #json(
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal,
    trace: Record<string, string> = {},
  ): Promise<Record<string, unknown>> {
    const res = await fetch(this.#base + path, {
      method,
      signal,
      headers: this.#headers(body === undefined ? trace : { 'content-type': 'application/json', ...trace }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      let detail = text.slice(0, 300);
      try {
        detail = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? detail;
      } catch {
        /* not JSON */
      }
      throw new ProviderError(
        this.name,
        `${method} ${this.#base}${path} answered HTTP ${res.status}: ${detail}`,
        res.status,
      );
    }
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new ProviderError(
        this.name,
        `${method} ${this.#base}${path} answered with a body that is not JSON`,
        res.status,
      );
    }
  }

  /** Reads the stream to its terminal chunk, resuming at the byte offset after a lost connection. */
  async #stream(path: string, ac: AbortController, onFrame: (c: Chunk) => Promise<void>): Promise<Chunk> {
    let offset = 0;
    let resumes = 0;
    let terminal: Chunk | null = null;
    const idleMs = this.opts.idleTimeoutMs ?? 60000;
    for (;;) {
      const conn = new AbortController();
      const stop = () => conn.abort(ac.signal.reason);
      ac.signal.addEventListener('abort', stop, { once: true });
      let idle: NodeJS.Timeout | null = null;
      const arm = () => {
        if (idle) clearTimeout(idle);
        idle = setTimeout(() => conn.abort(new Error(`no bytes for ${idleMs} ms`)), idleMs);
        idle.unref();
      };
      try {
        arm();
        const sep = path.includes('?') ? '&' : '?';
        const res = await fetch(`${this.#base}${path}${offset > 0 ? `${sep}offset=${offset}` : ''}`, {
          headers: this.#headers({
            accept: 'text/event-stream',
            ...(offset > 0 ? { 'last-event-id': String(offset) } : {}),
          }),
          signal: conn.signal,
        });
        if (!res.ok || !res.body) {
          const text = await res.text().catch(() => '');
          throw new ProviderError(
            this.name,
            `GET ${this.#base}${path} answered HTTP ${res.status}: ${text.slice(0, 300)}`,
            res.status,
          );
        }
        for await (const ev of sseEvents(res.body as unknown as AsyncIterable<Uint8Array>, offset)) {
          arm();
          offset = ev.end;
          if (ev.data === null) continue;
          if (ev.data === '[DONE]') {
            if (!terminal)
              throw new ProviderError(this.name, `The stream of ${this.#base}${path} ended without a terminal chunk`);
            return terminal;
          }
          const chunk = JSON.parse(ev.data) as Chunk;
          if (chunk.finish_reason === null || chunk.finish_reason === undefined) await onFrame(chunk);
          else terminal = chunk;
        }
        if (terminal) return terminal;
        throw new Error('the stream ended before [DONE]');
      } catch (e) {
        if (ac.signal.aborted || e instanceof ProviderError || resumes >= MAX_RESUMES)
          throw ac.signal.aborted ? ac.signal.reason : e;
        resumes++;
      } finally {
        if (idle) clearTimeout(idle);
        ac.signal.removeEventListener('abort', stop);
      }
    }
  }

  async #tracks(taskId: string, signal: AbortSignal): Promise<TrackSummary[]> {
    // The summary is a nicety (the worker folds one from the frames without it): a failure here is no error.
    try {
      const r = await this.#json('GET', `/v1/video/tasks/${taskId}/results`, undefined, signal);
      return Array.isArray(r.tracks) ? (r.tracks as TrackSummary[]) : [];
    } catch {
      return [];
    }
  }

  async #cancel(taskId: string): Promise<void> {
    try {
      await fetch(`${this.#base}/v1/video/tasks/${taskId}/cancel`, {
        method: 'POST',
        headers: this.#headers(),
        signal: AbortSignal.timeout(5000),
      });
    } catch {
      /* best effort: the remote's own limits end the task */
    }
  }
}
