// The video decoder the pipeline uses, over the native one (src/native/decode.ts checks the options and
// calls the addon): it serialises reads, follows an AbortSignal, hands out frames as views (with rotating
// buffers in frames()), keeps the counters, and turns the addon's failures into DecodeErrors whose codes are
// the ones clients see. Every native call runs on a thread of the addon's own, so decoding never blocks the
// event loop, and decoders waiting on slow sources do not hold libuv's pool.
//
// Frame indexing and sampling, precisely:
// - `index` is the 0-based index of the frame in the source video stream in presentation order (the
//   order the decoder outputs frames). While every frame since the stream start has been decoded it is a
//   counter, so it is exact even for variable frame rates. After a seek (range start) the counter is
//   re-anchored once from the frame's time (round(t * fps)); in keyframe mode each index comes from the
//   time. For constant-frame-rate sources both are exact.
// - `ptsMs` is the presentation time relative to the stream start, in milliseconds. Inputs whose packets
//   carry no presentation times (AVI, raw streams) are timed as constant-rate: index / fps (FFmpeg's own
//   guess runs late there by the B-frame reorder delay).
// - Sample times are origin + k * step (step = 1/value for fps, value for interval). A frame is sampled
//   when its time reaches the next sample time; the next sample time then moves past it, so a frame is
//   never taken twice and a gap in a variable-rate stream gives one frame, not a burst. The origin is the
//   range start (seconds) or the first frame in the range (frames), 0 without a range. Example: a 10 s
//   25 fps clip at 1 fps gives indices 0, 25, ..., 225; interval 2 gives 0, 50, 100, 150, 200.
//   Live sources' frame times come from the sender's clock and jitter by milliseconds, so there a frame up
//   to half a source frame early reaches its sample time (the nearest frame is taken): a 5 fps camera
//   sampled at 5 fps keeps every frame instead of skipping the ones that came 2 ms early.
// - keyframe mode decodes only key packets; the others are never decoded.
// - `range` is half-open, [start, end), in seconds or frame indices; the decoder seeks to the nearest key
//   frame at or before the start and decodes forward (those pre-roll frames are not counted anywhere).
// - `decodedFrames` counts frames decoded inside the range (sampled or not); `droppedFrames` counts
//   sampling skips inside the range (in keyframe mode: the non-key packets never decoded) plus decode
//   failures. Without failures, decodedFrames = emitted + skips. For speed the codec skips non-reference
//   frames that no sample needs (B-frames, when packets carry presentation times); they count exactly as
//   if decoded and dropped, so the numbers do not depend on it.
// - `maxFrames` caps the emitted frames; finishReason is 'max_frames' only when the source had a further
//   frame due (the decoder looks ahead to the next sample), else 'stop'.
// - `totalFrames` is the container's frame count, or duration * fps; null when the input is not seekable
//   (piped, live, or an HTTP response without a length).
// - Live inputs (info.live: rtsp(s), a live HLS playlist, an endless HTTP stream) are read by the addon in
//   the background; a read gets the newest sampled frame (frames of a burst, sent ahead of their time, wait
//   for it while it is under a second behind), and sampled frames a slow reader missed count in
//   droppedFrames (and lateDrops). Times count from the first frame received; `wallMs` is when the decoder
//   received the frame (unix epoch ms), so now - wallMs is how far behind the reader is.
// - Resuming (files): each frame carries a `cursor`, and `resume: cursor` in the options of a fresh decoder
//   (same input and options, on any machine) continues after that frame with the same indices, times, pixels
//   and counters as above; maxFrames stays the whole task's cap. How it finds the frame again, and what that
//   costs: docs/video.md, "When a worker dies".
import { DecodeError } from '../../base/errors.js';
import { GuardedSource, type GuardedSourceOptions, type SourceIdentity } from '../../media/guarded-source.js';
import {
  checkRead,
  decodeFailure,
  NativeDecoder,
  type DecodeNativeError,
  type DecodeOptions,
  type DecoderCursor,
  type NativeFrameBatch,
  type VideoInfo,
} from '../../native/decode.js';

export interface DecoderOptions extends DecodeOptions {
  /** Aborting it is abort(): it also stops an open() still waiting on the network. */
  signal?: AbortSignal;
  /**
   * How an http(s) input reaches the network: the URL policy (default: the strict one, no private addresses)
   * and limits of the guarded path (src/media/guarded-source.ts) that every byte of it goes through.
   */
  network?: GuardedSourceOptions;
  /** Called once the decoder is closed or aborted (an opened decoder only): frees what the caller set up for it. */
  onClosed?: () => void;
}

const isHttp = (input: string) => /^https?:\/\//i.test(input);

export interface DecodedFrame {
  index: number;
  ptsMs: number;
  keyframe: boolean;
  /** When the decoder received the frame (unix epoch ms). */
  wallMs: number;
  width: number;
  height: number;
  /** RGB24, rows packed (width * 3 bytes each). A view: see read() and frames() for how long it is valid. */
  data: Uint8Array;
  /** A file's cursor after this frame, for `resume` (src/native/decode.ts); null for a live input. */
  cursor: DecoderCursor | null;
}

export interface DecodeStats {
  decodedFrames: number;
  droppedFrames: number;
  /** Live inputs: sampled frames dropped because the reader was behind (included in droppedFrames). */
  lateDrops: number;
}

export interface FrameBatch extends DecodeStats {
  frames: DecodedFrame[];
  /** Set once no more frames will come: 'stop' (end of input or range) or 'max_frames'. */
  finishReason: 'stop' | 'max_frames' | null;
}

/** Decoder failures (built in the error catalogue); `code` is the native decoder's stable reason, and
 * clientError below only compiles while every reason the addon can report is a catalogued code. */
export { DecodeError };
export type { DecoderCursor };

/** The DecodeError for a native decode failure, with the stack of `caller` (an Error made where the call
 * began); any other error as it is. A refusal or limit of the guarded network path wins: it is why the
 * decoder stopped. The caller's stack is read only here: formatting it (through source maps when they are
 * on) cost main-thread time on every read (a live frame each) when every call read it up front
 * (docs/capacity.md, "A camera frame's main-thread work"). */
function clientError(e: unknown, caller: Error, source?: GuardedSource | null): unknown {
  if (source?.failure && decodeFailure(e) !== 'aborted') return source.failure;
  const reason = decodeFailure(e);
  return reason ? new DecodeError(reason, (e as Error).message, caller.stack) : e;
}

/**
 * One input being decoded. Calls are serialised (a read waits for the previous one); abort() is not, so
 * it can stop a read that is blocked on the network. Always close() or abort() when done.
 */
export class VideoDecoder {
  readonly info: VideoInfo;
  #native: NativeDecoder;
  #tail: Promise<unknown> = Promise.resolve();
  #stats: DecodeStats = { decodedFrames: 0, droppedFrames: 0, lateDrops: 0 };
  #finish: 'stop' | 'max_frames' | null = null;
  #closed = false;
  #aborted = false;
  #unlisten: () => void;
  #source: GuardedSource | null;
  #onClosed: (() => void) | null = null;
  #cursor: DecoderCursor | null = null;

  private constructor(
    native: NativeDecoder,
    info: VideoInfo,
    signal: AbortSignal | undefined,
    onAbort: () => void,
    source: GuardedSource | null,
  ) {
    this.#native = native;
    this.#source = source;
    this.info = info;
    signal?.removeEventListener('abort', onAbort);
    const abort = () => void this.abort();
    signal?.addEventListener('abort', abort, { once: true });
    this.#unlisten = () => signal?.removeEventListener('abort', abort);
  }

  /**
   * Opens a file path or a URL. An http(s) URL is read only through the guarded network path under
   * `options.network` (its policy applies to the URL, every redirect, playlist entry and segment); an rtsp
   * URL is given here already pointing at the loopback relay of the checked address (media/rtsp-relay.ts).
   */
  static async open(input: string, options: DecoderOptions = {}): Promise<VideoDecoder> {
    const caller = new Error();
    const { signal, network, onClosed, ...decodeOptions } = options;
    if (signal?.aborted) throw new DecodeError('aborted', 'Decoding was aborted', caller.stack);
    const native = new NativeDecoder();
    const source = isHttp(input) ? new GuardedSource(native.net, network ?? { policy: { allowPrivate: false } }) : null;
    const onAbort = () => {
      source?.dispose();
      void native.abort();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let info: VideoInfo;
    try {
      info = await native.open(input, decodeOptions, source?.handle);
    } catch (e) {
      signal?.removeEventListener('abort', onAbort);
      await native.close();
      source?.dispose();
      throw clientError(e, caller, source);
    }
    const decoder = new VideoDecoder(native, info, signal, onAbort, source);
    decoder.#onClosed = onClosed ?? null;
    decoder.#cursor = decodeOptions.resume ?? null;
    return decoder;
  }

  /** Bytes of one output frame (outWidth * outHeight * 3). */
  get frameBytes(): number {
    return this.info.outWidth * this.info.outHeight * 3;
  }

  get stats(): DecodeStats {
    return { ...this.#stats };
  }

  /**
   * The cursor of the last frame handed out (by read(), or yielded by frames()): what a fresh decoder needs in
   * `resume` to continue after it. Null before the first frame, and for live inputs. With `resume`, until the
   * first frame it is the cursor resumed from.
   */
  get cursor(): DecoderCursor | null {
    return this.#cursor;
  }

  /**
   * What identifies an http(s) input's bytes (length, ETag / Last-Modified), for a continued task to check; null
   * for a file path, a live or HLS input, or a resource that does not say (src/media/guarded-source.ts).
   */
  get sourceIdentity(): SourceIdentity | null {
    return this.info.live ? null : (this.#source?.identity ?? null);
  }

  /** 'stop' or 'max_frames' once the decoder has finished; null while frames may still come. */
  get finishReason(): 'stop' | 'max_frames' | null {
    return this.#finish;
  }

  /**
   * Decodes up to `maxCount` sampled frames. With `target` (at least frameBytes bytes), frames are written
   * into it and returned as views of it (at most target.byteLength / frameBytes of them), so a caller can
   * reuse its buffers; they stay valid until the caller writes there again. Without it, each batch gets
   * fresh memory.
   */
  read(maxCount = 4, target?: Uint8Array): Promise<FrameBatch> {
    return this.#read(maxCount, target).then((batch) => {
      const last = batch.frames.at(-1);
      if (last) this.#cursor = last.cursor;
      return batch;
    });
  }

  // read() without moving `cursor`: frames() reads ahead of the frames it has handed out.
  #read(maxCount: number, target: Uint8Array | undefined): Promise<FrameBatch> {
    const caller = new Error();
    try {
      checkRead(maxCount, target, this.frameBytes);
    } catch (e) {
      return Promise.reject(e);
    }
    const run = async (): Promise<FrameBatch> => {
      if (this.#aborted) throw new DecodeError('aborted', 'Decoding was aborted', caller.stack);
      if (this.#closed) throw new DecodeError('not_open', 'The decoder is closed', caller.stack);
      if (this.#finish) return { frames: [], finishReason: this.#finish, ...this.#stats };
      let r: NativeFrameBatch;
      try {
        r = await this.#native.read(maxCount, target);
      } catch (e) {
        const { stats } = e as DecodeNativeError;
        if (stats)
          this.#stats = {
            decodedFrames: stats.decodedFrames,
            droppedFrames: stats.droppedFrames,
            lateDrops: stats.lateDrops,
          };
        throw clientError(e, caller, this.#source);
      }
      this.#stats = {
        decodedFrames: r.stats.decodedFrames,
        droppedFrames: r.stats.droppedFrames,
        lateDrops: r.stats.lateDrops,
      };
      const frames: DecodedFrame[] = [];
      const { outWidth: width, outHeight: height } = this.info;
      for (let i = 0; i < r.count; i++) {
        frames.push({
          index: r.index[i],
          ptsMs: r.ptsMs[i],
          keyframe: r.keyframe[i] === 1,
          wallMs: r.wallMs[i],
          width,
          height,
          data: r.data.subarray(i * r.frameBytes, (i + 1) * r.frameBytes),
          cursor: r.cursors?.[i] ?? null,
        });
      }
      if (r.status === 'end') this.#finish = 'stop';
      else if (r.status === 'max_frames') this.#finish = 'max_frames';
      return { frames, finishReason: this.#finish, ...this.#stats };
    };
    const p = this.#tail.then(run, run);
    this.#tail = p.catch(() => undefined);
    return p;
  }

  /**
   * All remaining sampled frames. Decoding of the next batch overlaps with the caller's work on the
   * current one. With `reuseBuffers`, three buffers rotate (the caller's batch, the one being decoded,
   * and the previous one): a yielded frame's data stays valid until at least `batchSize` further frames
   * have been yielded (copy it to keep it longer).
   */
  async *frames(batchSize = 4, reuseBuffers = false): AsyncGenerator<DecodedFrame> {
    const buffers = reuseBuffers ? [0, 1, 2].map(() => new Uint8Array(batchSize * this.frameBytes)) : [];
    let turn = 0;
    let pending: Promise<FrameBatch> | null = this.#read(batchSize, buffers[turn]);
    try {
      while (pending) {
        const batch: FrameBatch = await pending;
        turn = (turn + 1) % 3;
        pending = batch.finishReason ? null : this.#read(batchSize, buffers[turn]);
        for (const frame of batch.frames) {
          this.#cursor = frame.cursor;
          yield frame;
        }
      }
    } finally {
      // A consumer that stops early must not leave a read running into a buffer it may drop.
      if (pending) await pending.catch(() => undefined);
    }
  }

  /** Frees the decoder and closes the input (after any read in flight). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unlisten();
    const done = this.#tail.then(() => this.#native.close());
    this.#tail = done.catch(() => undefined);
    try {
      await done;
    } finally {
      this.#release();
    }
  }

  /**
   * Stops now: a read blocked on the network returns when FFmpeg next polls its interrupt check
   * (docs/video.md, "Live sources"), its promise rejecting with code 'aborted'; then everything is freed and
   * the connection closed. Resolves once that is done.
   */
  async abort(): Promise<void> {
    this.#closed = true;
    this.#aborted = true;
    this.#unlisten();
    // The connections drop now, not once the blocked read noticed the abort.
    this.#source?.dispose();
    try {
      await this.#native.abort();
    } finally {
      this.#release();
    }
  }

  #release(): void {
    this.#source?.dispose();
    const onClosed = this.#onClosed;
    this.#onClosed = null;
    onClosed?.();
  }
}
