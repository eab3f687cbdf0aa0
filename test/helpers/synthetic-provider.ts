// A video provider for tests and the video bench: emits synthetic frames without decoding anything, so the
// task machinery (queue, leases, failover, cancel, archive, multi-process streaming) can be tested
// deterministically. Tests hand it to a worker directly (startWorker in ./video-tasks.ts), to a test app
// (startTestApp's `videoProviders`), or to a worker process (../video/synthetic-worker.ts); the
// product never loads it. The source URL's query may shape a run: ?frames=N&frame_ms=M&start_ms=S&targets=T
// (defaults 10, 20, 0, 1; T targets per frame make chunks of about 120 T bytes); &walkers=W instead: W people
// (track ids 1..W, 20 x 40 boxes) walk right to left from x = 600 at 20 px a frame, at y = 100 + 50 w (the
// analytics tests count them on lines and zones).
import {
  ProviderError,
  type FrameOutput,
  type ProviderContext,
  type ProviderResult,
  type VideoProvider,
  type VideoTaskRequest,
} from '../../src/video/task-contract.js';
import { abortableSleep as sleep } from './abortable-sleep.js';

export interface SyntheticOptions {
  name?: string;
  frames?: number;
  frameMs?: number;
  startMs?: number;
  /** Throw ProviderError (with this HTTP-like status) before emitting anything. */
  failBefore?: number;
  /** Throw ProviderError after emitting this many frames. */
  failAfterFrames?: number;
  /** Throw this error (an ApiError, as the local provider's parts throw them) before emitting anything. */
  failWith?: Error;
}

/** A synthetic run's result: `emitted` frames since `started` (Date.now()), the last one's stream info. */
export function runResult(
  finishReason: ProviderResult['finish_reason'],
  last: FrameOutput['stream_info'],
  emitted: number,
  started: number,
): ProviderResult {
  return {
    finish_reason: finishReason,
    stream_info: last,
    usage: {
      processed_frames: emitted,
      processing_time_ms: Date.now() - started,
      decoded_frames: last.decoded_frames,
      dropped_frames: 0,
    },
    tracks: [],
  };
}

/**
 * Analytics rules for the `walkers` runs: the line `door` at x = 400, which every walker crosses, and the zone
 * `left` (x < 300) they walk into; `zone`: more settings of that zone (dwell_ms, classes, ...).
 */
export const walkerRules = (zone: Record<string, unknown> = {}) => ({
  lines: [
    {
      id: 'door',
      points: [
        [400, 0],
        [400, 480],
      ],
    },
  ],
  zones: [
    {
      id: 'left',
      polygon: [
        [0, 0],
        [300, 0],
        [300, 480],
        [0, 480],
      ],
      ...zone,
    },
  ],
});

export class SyntheticProvider implements VideoProvider {
  readonly name: string;
  /** Runs started (tests assert that failover tried each provider once). */
  runs = 0;

  constructor(private readonly opts: SyntheticOptions = {}) {
    this.name = opts.name ?? 'synthetic';
  }

  async run(
    request: VideoTaskRequest,
    source: { path?: string; url?: string },
    ctx: ProviderContext,
  ): Promise<ProviderResult> {
    this.runs++;
    const q = source.url ? new URL(source.url).searchParams : new URLSearchParams();
    const n = (k: string, def: number) => (q.has(k) ? Number(q.get(k)) : def);
    const frames = Math.min(n('frames', this.opts.frames ?? 10), request.input[0]?.max_frames ?? Infinity);
    const frameMs = n('frame_ms', this.opts.frameMs ?? 20);
    const targets = Math.max(1, n('targets', 1));
    const started = Date.now();
    await sleep(n('start_ms', this.opts.startMs ?? 0), ctx.signal);
    if (this.opts.failWith) throw this.opts.failWith;
    if (this.opts.failBefore !== undefined)
      throw new ProviderError(
        this.name,
        `synthetic failure before the first frame (HTTP ${this.opts.failBefore})`,
        this.opts.failBefore,
      );
    const fps = 10;
    let last: FrameOutput['stream_info'] = {
      frame_index: 0,
      total_frames: frames,
      decoded_frames: 0,
      dropped_frames: 0,
      fps,
      elapsed_ms: 0,
    };
    let emitted = 0;
    for (let i = 0; i < frames; i++) {
      if (ctx.signal.aborted) break;
      if (this.opts.failAfterFrames !== undefined && emitted >= this.opts.failAfterFrames) {
        throw new ProviderError(this.name, `synthetic failure after ${emitted} frame(s)`, 500);
      }
      last = {
        frame_index: i,
        total_frames: frames,
        decoded_frames: i + 1,
        dropped_frames: 0,
        fps,
        elapsed_ms: Date.now() - started,
      };
      const walkers = n('walkers', 0);
      const boxes =
        walkers > 0
          ? Array.from({ length: walkers }, (_, w) => ({
              track_id: 1 + w,
              class: 'person',
              confidence: 0.9,
              roi: { left: 590 - 20 * i, top: 60 + 50 * w, width: 20, height: 40 },
            }))
          : Array.from({ length: targets }, (_, k) => ({
              track_id: 1 + ((i + k) % 2) + 2 * k,
              class: (i + k) % 2 ? 'car' : 'person',
              confidence: 0.5 + (i % 5) / 10,
              roi: { left: i, top: 2 * i + k, width: 10, height: 20 },
            }));
      const frame: FrameOutput = {
        stream_info: walkers > 0 ? { ...last, stream_time_ms: i * 100 } : last,
        delta: { results: [{ index: 0, targets: boxes }] },
      };
      if (!(await ctx.emit(frame))) break;
      emitted++;
      await sleep(frameMs, ctx.signal);
    }
    return runResult(frames === (request.input[0]?.max_frames ?? -1) ? 'max_frames' : 'stop', last, emitted, started);
  }
}
