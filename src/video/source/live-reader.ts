// Frames of a live source (VideoDecoder info.live: rtsp(s), a live HLS playlist, an endless HTTP stream) for
// the pipeline, across reconnects (docs/video.md, "Live sources").
//  - No read-ahead: the addon keeps only the newest sampled frame, so the frame a read returns is the
//    freshest there is when the pipeline is ready for it; a frame held here would only age.
//  - A source that drops (a read error, a stall past the stall timeout, or the end of an RTSP or HTTP stream,
//    which for a camera means the connection went away) is reopened with backoff: 0.5 s doubling to 8 s, at
//    most reconnect.max_attempts times and reconnect.max_seconds from the drop. A source that comes back as
//    a finished video (a live HLS playlist that got #EXT-X-ENDLIST) has ended: 'stop'. FFmpeg's HLS reader
//    also ends on a playlist it failed to reload, so an end alone is not trusted.
//  - Times and indices continue over a gap: the first frame after it is as late in stream time as it was on
//    the wall clock, and the frames the source sent meanwhile (gap * fps) count as dropped.
//  - range and max_frames hold for the whole task: the reopened decoder gets the remaining frame budget, the
//    range is applied here in stream time (seconds) or index (frames).
//  - A task that another worker continues after its worker died (opts.resume: the stored checkpoint) is read
//    as after a reconnect: its first frame comes as late after the stored last frame as the wall clock says,
//    the frames in between count as dropped, and that frame carries the gap (gapMs) for its chunk.
import { DecodeError, type DecodedFrame, type VideoDecoder } from './decoder.js';
import { ProviderError } from '../task-contract.js';

export interface ReconnectPolicy {
  maxAttempts: number;
  maxSeconds: number;
}

export interface LiveFrame extends DecodedFrame {
  /** Index in the whole live stream (gaps included). */
  streamIndex: number;
  streamTimeMs: number;
  /** The first frame after a resume: wall-clock ms since the stored last frame. */
  gapMs?: number;
}

/** Where a resumed task's stream stood at its last archived frame (its checkpoint). */
export interface LiveResume {
  index: number;
  timeMs: number;
  wallMs: number;
  decodedFrames: number;
  droppedFrames: number;
  reconnects: number;
  /** Frames of the task already processed (max_frames counts them). */
  taken: number;
}

export interface LiveCounters {
  decodedFrames: number;
  droppedFrames: number;
  reconnects: number;
}

/** Opens the source again; rejects when the attempt failed (the reader then backs off and tries again). */
export type Reopen = (maxFrames: number, openTimeoutMs: number) => Promise<VideoDecoder>;

const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8000;

/** Decoder failures that mean the connection went away, not that the input is not a video. */
const DROPS = new Set(['fetch_failed', 'timeout', 'decode_failed', 'invalid_video', 'no_video_stream']);

/** Whether a failure to read or open a live source means it went away (worth opening again). */
export function isSourceDrop(e: unknown): boolean {
  return e instanceof DecodeError && DROPS.has(e.code);
}

export class LiveReader {
  #decoder: VideoDecoder;
  #buffer: Uint8Array;
  /** Counters of the decoders already closed, plus the frames lost in gaps. */
  #decodedBase = 0;
  #droppedBase = 0;
  #reconnects = 0;
  /** The current decoder's counters are already in the bases (it was closed for a reconnect). */
  #absorbed = false;
  #taken = 0;
  #last: { index: number; timeMs: number; wallMs: number } | null = null;
  /** Set by a reconnect: maps the next decoder's first frame onto the stream. */
  #rebase: { dropAtWall: number } | null = null;
  /** The drop being recovered from: a source counts as back only once it gives a frame, so one that
   * reopens and stalls again spends the same budget rather than getting a new one. */
  #drop: { at: number; attempts: number; delay: number; reason: string } | null = null;
  #offset = { index: 0, timeMs: 0 };
  /** Continuing a task from its checkpoint: the range is applied here (the first decoder opened without it),
   * and the first frame reports its gap. */
  readonly #resumed: boolean;
  #reportGap = false;

  constructor(
    first: VideoDecoder,
    private readonly reopen: Reopen,
    private readonly policy: ReconnectPolicy,
    private readonly opts: {
      maxFrames: number;
      openTimeoutMs: number;
      range?: { start?: number; end?: number; unit?: 'seconds' | 'frames' };
      signal: AbortSignal;
      resume?: LiveResume;
    },
  ) {
    this.#decoder = first;
    this.#buffer = new Uint8Array(first.frameBytes);
    const r = opts.resume;
    this.#resumed = r !== undefined;
    if (r) {
      this.#last = { index: r.index, timeMs: r.timeMs, wallMs: r.wallMs };
      this.#rebase = { dropAtWall: r.wallMs };
      this.#decodedBase = r.decodedFrames;
      this.#droppedBase = r.droppedFrames;
      this.#reconnects = r.reconnects;
      this.#taken = r.taken;
      this.#reportGap = true;
    }
  }

  get decoder(): VideoDecoder {
    return this.#decoder;
  }

  counters(): LiveCounters {
    const s = this.#absorbed ? { decodedFrames: 0, droppedFrames: 0 } : this.#decoder.stats;
    return {
      decodedFrames: this.#decodedBase + s.decodedFrames,
      droppedFrames: this.#droppedBase + s.droppedFrames,
      reconnects: this.#reconnects,
    };
  }

  /** The next frame (its data valid until the next call), or how the stream finished. */
  async next(): Promise<LiveFrame | 'stop' | 'max_frames'> {
    for (;;) {
      this.opts.signal.throwIfAborted();
      let frame: DecodedFrame | undefined;
      let finish: 'stop' | 'max_frames' | null = null;
      let dropped: string | null = null;
      try {
        const batch = await this.#decoder.read(1, this.#buffer);
        frame = batch.frames[0];
        finish = batch.finishReason;
      } catch (e) {
        this.opts.signal.throwIfAborted();
        if (!(e instanceof DecodeError) || !DROPS.has(e.code)) throw e;
        dropped = `${e.code}: ${e.message}`;
      }
      if (frame) {
        this.#drop = null;
        const f = this.#place(frame);
        if (f === 'before') continue;
        if (f === 'after') return 'stop';
        this.#taken++;
        return f;
      }
      if (finish === 'max_frames') return 'max_frames';
      if (!dropped) dropped = 'the source ended the stream';
      if (!(await this.#reconnect(dropped))) return 'stop';
    }
  }

  /** Maps a decoder frame onto the stream; 'before'/'after' when the range leaves it out. */
  #place(frame: DecodedFrame): LiveFrame | 'before' | 'after' {
    let gap: number | undefined;
    if (this.#rebase) {
      const last = this.#last;
      const fps = this.#decoder.info.fps;
      if (last) {
        const gapMs = Math.max(0, frame.wallMs - last.wallMs);
        if (this.#reportGap) gap = Math.round(gapMs);
        this.#reportGap = false;
        const lost = fps > 0 ? Math.max(0, Math.round((gapMs / 1000) * fps) - 1) : 0;
        this.#droppedBase += lost;
        this.#offset = { index: last.index + 1 + lost - frame.index, timeMs: last.timeMs + gapMs - frame.ptsMs };
      } else {
        this.#offset = { index: 0, timeMs: Math.max(0, frame.wallMs - this.#rebase.dropAtWall) - frame.ptsMs };
      }
      this.#rebase = null;
    }
    const streamIndex = frame.index + this.#offset.index;
    const streamTimeMs = frame.ptsMs + this.#offset.timeMs;
    this.#last = { index: streamIndex, timeMs: streamTimeMs, wallMs: frame.wallMs };
    // The first decoder applies the range itself; reopened ones run without it (their times restart at 0).
    const r = this.opts.range;
    if (r && (this.#reconnects > 0 || this.#resumed)) {
      const pos = r.unit === 'frames' ? streamIndex : streamTimeMs / 1000;
      if (r.end !== undefined && pos >= r.end) return 'after';
      if (r.start !== undefined && pos < r.start) return 'before';
    }
    return gap === undefined
      ? { ...frame, streamIndex, streamTimeMs }
      : { ...frame, streamIndex, streamTimeMs, gapMs: gap };
  }

  /** Reopens the source; false when it came back as a finished video (a playlist that got #EXT-X-ENDLIST). */
  async #reconnect(why: string): Promise<boolean> {
    const drop = (this.#drop ??= { at: Date.now(), attempts: 0, delay: FIRST_BACKOFF_MS, reason: why });
    const { at: droppedAt, reason } = drop;
    const old = this.#decoder.stats;
    this.#decodedBase += old.decodedFrames;
    this.#droppedBase += old.droppedFrames;
    this.#absorbed = true;
    await this.#decoder.close().catch(() => undefined);
    const deadline = droppedAt + this.policy.maxSeconds * 1000;
    let lastError = why;
    while (drop.attempts < this.policy.maxAttempts) {
      drop.attempts++;
      const delay = drop.delay;
      drop.delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      const wait = Math.min(delay, deadline - Date.now());
      if (wait < 0) break;
      await sleep(wait, this.opts.signal);
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const d = await this.reopen(
          Math.max(1, this.opts.maxFrames - this.#taken),
          Math.max(1, Math.min(this.opts.openTimeoutMs, Math.round(left))),
        );
        if (!d.info.live) {
          // Reading it again would replay what was already processed.
          await d.close().catch(() => undefined);
          return false;
        }
        this.#decoder = d;
        this.#absorbed = false;
        if (this.#buffer.byteLength < d.frameBytes) this.#buffer = new Uint8Array(d.frameBytes);
        this.#reconnects++;
        this.#rebase = { dropAtWall: droppedAt };
        return true;
      } catch (e) {
        this.opts.signal.throwIfAborted();
        if (!(e instanceof DecodeError) && !(e instanceof ProviderError)) throw e;
        lastError = e.message;
      }
    }
    throw new SourceLostError(reason, lastError, this.#reconnects, Date.now() - droppedAt);
  }
}

/** The live source dropped and did not come back within the reconnect policy. */
export class SourceLostError extends Error {
  constructor(
    readonly reason: string,
    readonly lastError: string,
    readonly reconnects: number,
    readonly waitedMs: number,
  ) {
    super(
      `The live source dropped (${reason}) and did not come back within ${(waitedMs / 1000).toFixed(1)} s: ${lastError}`,
    );
    this.name = 'SourceLostError';
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
