// A video provider for tests and the video bench: emits synthetic frames without decoding anything, so the
// task machinery (queue, leases, failover, cancel, archive, multi-process streaming) can be tested
// deterministically. Tests hand it to a worker directly (startWorker in ./video-tasks.ts), to a test app
// (startTestApp's `videoProviders`), or to a worker process (../integration/synthetic-worker.ts); the
// product never loads it. The source URL's query may shape a run: ?frames=N&frame_ms=M&start_ms=S
// (defaults 10, 20, 0).
import { ProviderError, type FrameOutput, type ProviderContext, type ProviderResult, type VideoProvider, type VideoTaskRequest } from '../../src/video/worker/provider.js';

export interface SyntheticOptions {
  name?: string;
  frames?: number;
  frameMs?: number;
  startMs?: number;
  /** Throw ProviderError (with this HTTP-like status) before emitting anything. */
  failBefore?: number;
  /** Throw ProviderError after emitting this many frames. */
  failAfterFrames?: number;
}

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve) => {
  if (ms <= 0 || signal.aborted) return resolve();
  const onAbort = () => { clearTimeout(t); resolve(); };
  const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
  signal.addEventListener('abort', onAbort, { once: true });
});

export class SyntheticProvider implements VideoProvider {
  readonly name: string;
  /** Runs started (tests assert that failover tried each provider once). */
  runs = 0;

  constructor(private readonly opts: SyntheticOptions = {}) {
    this.name = opts.name ?? 'synthetic';
  }

  async run(request: VideoTaskRequest, source: { path?: string; url?: string }, ctx: ProviderContext): Promise<ProviderResult> {
    this.runs++;
    const q = source.url ? new URL(source.url).searchParams : new URLSearchParams();
    const n = (k: string, def: number) => (q.has(k) ? Number(q.get(k)) : def);
    const frames = Math.min(n('frames', this.opts.frames ?? 10), request.input[0]?.max_frames ?? Infinity);
    const frameMs = n('frame_ms', this.opts.frameMs ?? 20);
    const started = Date.now();
    await sleep(n('start_ms', this.opts.startMs ?? 0), ctx.signal);
    if (this.opts.failBefore !== undefined) throw new ProviderError(this.name, `synthetic failure before the first frame (HTTP ${this.opts.failBefore})`, this.opts.failBefore);
    const fps = 10;
    let last: FrameOutput['stream_info'] = { frame_index: 0, total_frames: frames, decoded_frames: 0, dropped_frames: 0, fps, elapsed_ms: 0 };
    let emitted = 0;
    for (let i = 0; i < frames; i++) {
      if (ctx.signal.aborted) break;
      if (this.opts.failAfterFrames !== undefined && emitted >= this.opts.failAfterFrames) {
        throw new ProviderError(this.name, `synthetic failure after ${emitted} frame(s)`, 500);
      }
      last = { frame_index: i, total_frames: frames, decoded_frames: i + 1, dropped_frames: 0, fps, elapsed_ms: Date.now() - started };
      const frame: FrameOutput = {
        stream_info: last,
        delta: { results: [{ index: 0, targets: [{ track_id: 1 + (i % 2), class: i % 2 ? 'car' : 'person', confidence: 0.5 + (i % 5) / 10, roi: { left: i, top: 2 * i, width: 10, height: 20 } }] }] },
      };
      if (!(await ctx.emit(frame))) break;
      emitted++;
      await sleep(frameMs, ctx.signal);
    }
    return {
      finish_reason: frames === (request.input[0]?.max_frames ?? -1) ? 'max_frames' : 'stop',
      stream_info: last,
      usage: { processed_frames: emitted, processing_time_ms: Date.now() - started, decoded_frames: last.decoded_frames, dropped_frames: 0 },
      tracks: [],
    };
  }
}
