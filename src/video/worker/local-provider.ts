// The in-process provider: decode and sample with the native decoder, run the frame pipeline on each sampled
// frame, emit one FrameOutput per frame in order. Decoding of the next frame overlaps the steps of the
// current one (two buffers take turns).
//
// Errors (provider.ts contract): a bad input (corrupt or missing video, unknown class, refused URL) is the
// ApiError it already is and is never retried; a failed or timed-out fetch of a URL, a model that cannot
// load, an inference crash are ProviderErrors (the worker moves on to the next provider before the first
// frame). On abort (ctx.signal, or emit answering false after a cancel) the decoder is aborted, which drops
// the upstream connection, and run() rejects with the signal's reason (an AbortError).
//
// A live source (decoder info.live) is read through LiveReader instead: no read-ahead (the newest frame
// wins), reconnects within input[].reconnect, and a source that does not come back is a ProviderError with
// code source_lost (after the first chunk the task fails with it; before, the next provider is tried).
// Its frames say the task can continue elsewhere (FrameOutput.resumable), and a run handed a checkpoint
// (ctx.resume: its worker died) continues from the live edge with the ids and counters after it
// (docs/video.md, "When a worker dies"); a source that is no longer live cannot be continued.
//
// A file (a staged upload or a local path) is resumable too: each frame carries the decoder's cursor and the
// pipeline's state after it (where the pipeline can give one: FramePipeline.snapshot()), and a run handed such
// a checkpoint opens the decoder at that cursor and restores the pipeline, so the frames, track ids and
// counters after it are those an undisturbed run gives. A file read from an http(s) URL is resumable when the
// server says which resource it serves (a length and an ETag or Last-Modified): the checkpoint carries that,
// and the continued run's decoder fails source_changed at open, before decoding a byte, unless it matches.
import { isApiError } from '../../base/errors.js';
import type { Services } from '../../services/services.js';
import { DecodeError, type FrameBatch, type VideoDecoder } from '../source/decoder.js';
import type { DecoderCursor } from '../../native/decode.js';
import {
  ProviderError,
  type FrameOutput,
  type ProviderContext,
  type ProviderResult,
  type StreamInfo,
  type VideoProvider,
  type VideoTaskRequest,
} from '../task-contract.js';
import { DEFAULT_MAX_FRAMES, DEFAULT_RECONNECT, DEFAULT_STALL_TIMEOUT_SECONDS } from '../task-contract.js';
import { FramePipeline, type FrameModels } from '../steps/frame-pipeline.js';
import type { FrameRefetch, StepServices } from '../pipeline/frame-step.js';
import type { RgbImage } from '../../media/rgb-image.js';
import { isSourceDrop, LiveReader, SourceLostError, type LiveResume } from '../source/live-reader.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { openVideo } from '../source/video-source.js';
import { DecoderDevices } from './decoder-devices.js';
import { chooseGpuDevices, visibleGpuCount } from '../../inference/gpu-devices.js';
import { SourceChangedError } from '../../media/guarded-source.js';
import type { Resolver, UrlPolicy } from '../../media/url-policy.js';

type TaskRange = NonNullable<VideoTaskRequest['input']>[number]['range'];

/** How long a live camera waits after its frame found the model queue full, before it takes the next. */
const REFUSED_PAUSE_MS = 50;

export interface LocalProviderDeps {
  /** SIGHTFLOW_ALLOW_PRIVATE_URLS: video URLs may reach private/loopback addresses. */
  allowPrivateUrls: boolean;
  /** The server's whole URL policy (SIGHTFLOW_URL_ALLOW / SIGHTFLOW_URL_DENY too); wins over allowPrivateUrls. */
  urlPolicy?: UrlPolicy;
  /** DNS seam for tests. */
  resolve?: Resolver;
  /** The detector and OCR the steps run (the services object's task models). */
  models: FrameModels;
  /** What steps reach beyond the models (index: the database, the log, vector collections); the services
   * object itself, read when a task runs. */
  services?: StepServices;
  /** SIGHTFLOW_VIDEO_HWACCEL: whether the decoder asks for the NVIDIA decoder (default none). */
  hwaccel?: 'none' | 'auto' | 'cuda';
  /** The GPUs the NVIDIA decoders take in turn (SIGHTFLOW_GPU_DEVICES); unset: device 0. */
  decoderDevices?: DecoderDevices;
}

/** Decoder failures that say nothing about the input itself: worth another provider (or another try). */
const RETRYABLE_DECODE = new Set(['fetch_failed', 'timeout', 'out_of_memory', 'not_open']);
// Reading a source's stream information once it opened needs, for a live stream joined mid-way, its next
// key frame: a wait with data flowing and no frame yet, which is not a stall. It may take the stall timeout
// but never less than this; connecting and the handshake keep the stall timeout (a silent server fails fast).
const MIN_PROBE_TIMEOUT_MS = 10_000;

export class LocalProvider implements VideoProvider {
  readonly name = 'local';
  readonly resumes = true;

  constructor(private readonly deps: LocalProviderDeps) {}

  static fromServices(s: Pick<Services, 'config' | 'taskModels'> & StepServices): LocalProvider {
    return new LocalProvider({
      allowPrivateUrls: s.config.allowPrivateUrls,
      urlPolicy: s.config.urlPolicy,
      models: s.taskModels,
      services: s,
      hwaccel: s.config.video.hwaccel,
      decoderDevices:
        s.config.video.hwaccel === 'none'
          ? undefined
          : new DecoderDevices(
              // No log: the inference runtime of the same process has warned about a missing ordinal.
              chooseGpuDevices(s.config.inference.gpuDevices, visibleGpuCount(s.config.inference.cudaVisibleDevices)),
            ),
    });
  }

  async run(
    request: VideoTaskRequest,
    source: { path?: string; url?: string },
    ctx: ProviderContext,
  ): Promise<ProviderResult> {
    const started = performance.now();
    const { signal } = ctx;
    let emitted = false;
    let decoder: VideoDecoder | null = null;
    let pipeline: FramePipeline | null = null;
    // The card this task's decoders ask for, the same one across its reconnects.
    const device = (this.deps.hwaccel ?? 'none') === 'none' ? undefined : this.deps.decoderDevices?.take();
    try {
      signal.throwIfAborted();
      pipeline = await this.#pipeline(request, ctx);
      const input = request.input?.[0] ?? { type: 'video_url' as const };
      const stallMs = Math.round((input.stall_timeout_seconds ?? DEFAULT_STALL_TIMEOUT_SECONDS) * 1000);
      const cp = ctx.resume;
      const network = {
        policy: this.deps.urlPolicy ?? { allowPrivate: this.deps.allowPrivateUrls },
        resolve: this.deps.resolve,
        ...(cp?.source ? { expect: cp.source } : {}),
      };
      // timeoutMs: the probe's limit; a reconnect passes less when its budget is nearly spent.
      const open = (maxFrames: number | undefined, timeoutMs: number, range = input.range, resume?: unknown) =>
        openVideo(source, network, {
          sampling: input.sampling,
          range,
          maxFrames,
          signal,
          openTimeoutMs: Math.min(stallMs, timeoutMs),
          probeTimeoutMs: timeoutMs,
          readTimeoutMs: stallMs,
          hwaccel: this.deps.hwaccel,
          ...(device !== undefined ? { hwaccelDevice: device } : {}),
          ...(resume !== undefined ? { resume: resume as DecoderCursor } : {}),
        });
      const openMs = Math.max(stallMs, MIN_PROBE_TIMEOUT_MS);
      const maxFrames = input.max_frames ?? DEFAULT_MAX_FRAMES;
      // The worker died after archiving the last frame the task may have: only the terminal chunk is missing.
      if (cp && cp.frames >= maxFrames) return this.#resumedAtEnd(cp, pipeline, started);
      // A resumed live source applies the range itself (LiveReader), its decoder gets the frames left; a
      // camera down when the task is taken over gets the reconnect policy, as if it dropped. A resumed file
      // opens at its cursor with the task's own range and cap (the cursor counts the frames emitted before).
      decoder = !cp
        ? await open(input.max_frames, openMs)
        : cp.live
          ? await this.#openResumed(() => open(maxFrames - cp.frames, openMs, undefined), input.reconnect, signal)
          : await open(input.max_frames, openMs, input.range, cp.decoder);
      const { info } = decoder;
      // Asked for NVDEC, the operator learns whether the decoder took it or fell back to software, and why.
      if ((this.deps.hwaccel ?? 'none') !== 'none')
        this.deps.services?.log?.info(
          {
            taskId: ctx.taskId,
            asked: this.deps.hwaccel,
            hwaccel: info.hwaccel,
            device: info.hwaccelDevice,
            fallback: info.hwaccelFallback,
          },
          'video decoder opened',
        );
      if (cp && cp.live !== (info.live === true))
        throw new ProviderError(
          this.name,
          cp.live
            ? 'The task cannot continue: its source is no longer a live stream'
            : 'The task cannot continue: its source is now a live stream',
        );
      // Before the first new frame: a step that kept pixels gets them decoded again.
      if (cp && !cp.live)
        await this.#restore(pipeline, cp.pipeline, (before) => this.#refetch(before, open, openMs, input.range));
      if (info.live) {
        const resume: LiveResume | undefined = cp && {
          index: cp.frame_index,
          timeMs: cp.stream_time_ms,
          wallMs: cp.received_at_ms,
          decodedFrames: cp.decoded_frames,
          droppedFrames: cp.dropped_frames,
          reconnects: cp.reconnects,
          taken: cp.frames,
        };
        const live = new LiveReader(
          decoder,
          (maxFrames, timeoutMs) => open(maxFrames, timeoutMs, undefined),
          {
            maxAttempts: input.reconnect?.max_attempts ?? DEFAULT_RECONNECT.max_attempts,
            maxSeconds: input.reconnect?.max_seconds ?? DEFAULT_RECONNECT.max_seconds,
          },
          { maxFrames, openTimeoutMs: openMs, range: input.range, signal, resume },
        );
        try {
          return await this.#runLive(live, pipeline, ctx, started, () => {
            emitted = true;
          });
        } finally {
          decoder = live.decoder;
        }
      }
      // A resumed file's elapsed time goes on from its checkpoint's, the outage included.
      const elapsedBase = cp ? cp.elapsed_ms + Math.max(0, Date.now() - cp.received_at_ms) : 0;
      let last: StreamInfo = cp
        ? {
            frame_index: cp.frame_index,
            total_frames: info.totalFrames,
            decoded_frames: cp.decoded_frames,
            dropped_frames: cp.dropped_frames,
            fps: info.fps,
            elapsed_ms: cp.elapsed_ms,
            stream_time_ms: cp.stream_time_ms,
            received_at_ms: cp.received_at_ms,
          }
        : {
            frame_index: 0,
            total_frames: info.totalFrames,
            decoded_frames: 0,
            dropped_frames: 0,
            fps: info.fps,
            elapsed_ms: 0,
          };
      let processed = 0;
      const steps = pipeline;
      // A file read from local storage is the same file when another worker opens it again; a URL's resource
      // only when it says what identifies it, which the checkpoint then carries.
      const identity = source.path === undefined ? decoder.sourceIdentity : null;
      const resumable = source.path !== undefined || identity !== null;
      // The cursor of the frame before the one processed (StepFrame.before): null before the task's first.
      let before: unknown = cp ? cp.decoder : null;
      const buffers = [new Uint8Array(decoder.frameBytes), new Uint8Array(decoder.frameBytes)];
      let turn = 0;
      let pending: Promise<FrameBatch> | null = decoder.read(1, buffers[turn]);
      try {
        while (pending) {
          const batch: FrameBatch = await pending;
          turn ^= 1;
          // Reading frame k+1 into the other buffer while frame k is processed; the stats of each batch are
          // exact for its own frame, so stream_info counts stay per frame.
          pending = batch.finishReason ? null : decoder.read(1, buffers[turn]);
          for (const frame of batch.frames) {
            const at = resumable ? { ...frame, before } : frame;
            const targets = await steps.process(at, signal);
            before = frame.cursor;
            signal.throwIfAborted();
            last = {
              frame_index: frame.index,
              total_frames: info.totalFrames,
              decoded_frames: batch.decodedFrames,
              dropped_frames: batch.droppedFrames,
              fps: info.fps,
              elapsed_ms: Math.round(elapsedBase + performance.now() - started),
              stream_time_ms: frame.ptsMs,
              received_at_ms: frame.wallMs,
            };
            const made: FrameOutput = {
              stream_info: last,
              delta: { results: [{ index: 0, targets }] },
              frame_size: { width: frame.width, height: frame.height },
            };
            // The worker's steps (analytics) first, so this pipeline's chunk hooks (index) see what they add.
            const out = ctx.complete ? ctx.complete(made) : made;
            await pipeline.chunk(out);
            // The state after this frame and its chunk (the index step has seen it), stored with the chunk when
            // the worker wants a checkpoint with it (every few chunks); taken only then.
            if (resumable && frame.cursor && steps.canSnapshot)
              out.resumable =
                ctx.checkpointDue?.() === false
                  ? { next_track_id: steps.nextTrackId, deferred: true }
                  : {
                      next_track_id: steps.nextTrackId,
                      decoder: frame.cursor,
                      pipeline: steps.snapshot(),
                      ...(identity ? { source: identity } : {}),
                    };
            const kept = await ctx.emit(out);
            emitted = true;
            processed++;
            if (!kept) throw signal.aborted ? signal.reason : new DOMException('The task was cancelled', 'AbortError');
          }
        }
      } finally {
        if (pending) await pending.catch(() => undefined);
      }
      await pipeline.finish();
      const stats = decoder.stats;
      // The terminal chunk repeats the last frame's info with the final counters (skips after the last sample).
      last = {
        ...last,
        decoded_frames: stats.decodedFrames,
        dropped_frames: stats.droppedFrames,
        elapsed_ms: Math.round(elapsedBase + performance.now() - started),
      };
      return {
        finish_reason: decoder.finishReason ?? 'stop',
        stream_info: last,
        usage: {
          processed_frames: processed,
          processing_time_ms: Math.round(performance.now() - started),
          decoded_frames: stats.decodedFrames,
          dropped_frames: stats.droppedFrames,
        },
        tracks: pipeline.tracks(),
      };
    } catch (e) {
      await pipeline?.close(signal.aborted && ctx.handedOn?.() === true);
      if (signal.aborted) {
        await decoder?.abort().catch(() => undefined);
        throw signal.reason;
      }
      await decoder?.abort().catch(() => undefined);
      throw this.#classify(e, emitted);
    } finally {
      await decoder?.close().catch(() => undefined);
      this.deps.decoderDevices?.give(device);
    }
  }

  /**
   * Opens a resumed task's source, retried within input.reconnect (backoff 0.5 s doubling to 8 s, as
   * LiveReader's) while it fails as a source that went away; then source_lost.
   */
  async #openResumed(
    open: () => Promise<VideoDecoder>,
    reconnect: { max_attempts?: number; max_seconds?: number } | undefined,
    signal: AbortSignal,
  ): Promise<VideoDecoder> {
    const maxAttempts = reconnect?.max_attempts ?? DEFAULT_RECONNECT.max_attempts;
    const deadline = Date.now() + (reconnect?.max_seconds ?? DEFAULT_RECONNECT.max_seconds) * 1000;
    let delay = 500;
    for (let attempt = 0; ; attempt++) {
      try {
        return await open();
      } catch (e) {
        signal.throwIfAborted();
        if (!isSourceDrop(e) && !(e instanceof ProviderError)) throw e;
        if (attempt >= maxAttempts || Date.now() + delay > deadline) {
          throw new ProviderError(
            this.name,
            `The live source did not come back when the task was taken over: ${(e as Error).message}`,
            undefined,
            'source_lost',
          );
        }
      }
      await sleep(delay, undefined, { signal });
      delay = Math.min(delay * 2, 8000);
    }
  }

  /** A resumed file's pipeline as the checkpoint left it; a state that does not fit fails the task. */
  async #restore(pipeline: FramePipeline, state: unknown, frames: FrameRefetch): Promise<void> {
    try {
      await pipeline.restore(state, frames);
    } catch (e) {
      if (isApiError(e) || e instanceof ProviderError || (e as Error)?.name === 'AbortError') throw e;
      throw new ProviderError(this.name, `The task cannot continue: ${(e as Error).message}`);
    }
  }

  /** The frame after a cursor (the first frame for null), decoded again at source size, for a restored step. */
  async #refetch(
    before: unknown,
    open: (maxFrames: number, timeoutMs: number, range: TaskRange, resume?: unknown) => Promise<VideoDecoder>,
    timeoutMs: number,
    range: TaskRange,
  ): Promise<RgbImage> {
    // The cap counts every frame of the task up to the cursor's: one more is the frame after it.
    const emitted = (before as DecoderCursor | null)?.emittedFrames ?? 0;
    const decoder = await open(emitted + 1, timeoutMs, range, before ?? undefined);
    try {
      const data = new Uint8Array(decoder.frameBytes);
      const batch = await decoder.read(1, data);
      const f = batch.frames[0];
      if (!f) throw new Error('a frame the checkpoint refers to could not be decoded again');
      return { data, width: f.width, height: f.height, channels: 3 };
    } finally {
      await decoder.close().catch(() => undefined);
    }
  }

  /** A resumed task whose frames are all archived: it ends as its last frame left it. */
  async #resumedAtEnd(
    cp: NonNullable<ProviderContext['resume']>,
    pipeline: FramePipeline,
    started: number,
  ): Promise<ProviderResult> {
    await pipeline.finish();
    const last: StreamInfo = {
      frame_index: cp.frame_index,
      total_frames: null,
      decoded_frames: cp.decoded_frames,
      dropped_frames: cp.dropped_frames,
      fps: 0,
      elapsed_ms: cp.elapsed_ms,
      stream_time_ms: cp.stream_time_ms,
      received_at_ms: cp.received_at_ms,
      ...(cp.live ? { live: true, reconnects: cp.reconnects } : {}),
    };
    return {
      finish_reason: 'max_frames',
      stream_info: last,
      tracks: [],
      usage: {
        processed_frames: 0,
        processing_time_ms: Math.round(performance.now() - started),
        decoded_frames: cp.decoded_frames,
        dropped_frames: cp.dropped_frames,
      },
    };
  }

  /** The live loop: take the newest frame, process it, emit; until max_frames, the source's end or a cancel. */
  async #runLive(
    live: LiveReader,
    pipeline: FramePipeline,
    ctx: ProviderContext,
    started: number,
    onEmit: () => void,
  ): Promise<ProviderResult> {
    const { signal } = ctx;
    const info = () => live.decoder.info;
    // A resumed task's elapsed time goes on from its checkpoint's, the outage included.
    const cp = ctx.resume;
    const elapsedBase = cp ? cp.elapsed_ms + Math.max(0, Date.now() - cp.received_at_ms) : 0;
    let last: StreamInfo = {
      frame_index: 0,
      total_frames: null,
      decoded_frames: 0,
      dropped_frames: 0,
      fps: info().fps,
      elapsed_ms: 0,
      live: true,
      reconnects: 0,
    };
    let processed = 0;
    let refused = 0;
    let finish: 'stop' | 'max_frames';
    for (;;) {
      let frame;
      try {
        frame = await live.next();
      } catch (e) {
        if (e instanceof SourceLostError) throw new ProviderError(this.name, e.message, undefined, 'source_lost');
        throw e;
      }
      if (frame === 'stop' || frame === 'max_frames') {
        finish = frame;
        break;
      }
      let targets;
      try {
        targets = await pipeline.process({ ...frame, index: frame.streamIndex }, signal);
      } catch (e) {
        // More cameras than the models keep up with: a frame the full background queue refused is dropped
        // and counted like any frame the camera outran, and the camera goes on with a newer one.
        if (!isApiError(e) || e.status !== 503) throw e;
        refused++;
        await new Promise((r) => setTimeout(r, REFUSED_PAUSE_MS));
        continue;
      }
      signal.throwIfAborted();
      const c = live.counters();
      last = {
        frame_index: frame.streamIndex,
        total_frames: null,
        decoded_frames: c.decodedFrames,
        dropped_frames: c.droppedFrames + refused,
        fps: info().fps,
        elapsed_ms: Math.round(elapsedBase + performance.now() - started),
        stream_time_ms: Math.round(frame.streamTimeMs),
        received_at_ms: frame.wallMs,
        live: true,
        reconnects: c.reconnects,
        ...(frame.gapMs !== undefined ? { gap_ms: frame.gapMs } : {}),
      };
      const made: FrameOutput = {
        stream_info: last,
        delta: { results: [{ index: 0, targets }] },
        frame_size: { width: frame.width, height: frame.height },
        resumable: { next_track_id: pipeline.nextTrackId },
      };
      // The worker's steps (analytics) first, so this pipeline's chunk hooks (index) see what they add.
      const out = ctx.complete ? ctx.complete(made) : made;
      await pipeline.chunk(out);
      const kept = await ctx.emit(out);
      onEmit();
      processed++;
      if (!kept) throw signal.aborted ? signal.reason : new DOMException('The task was cancelled', 'AbortError');
    }
    await pipeline.finish();
    const c = live.counters();
    const { gap_ms: _gap, ...lastInfo } = last;
    last = {
      ...lastInfo,
      decoded_frames: c.decodedFrames,
      dropped_frames: c.droppedFrames + refused,
      elapsed_ms: Math.round(elapsedBase + performance.now() - started),
    };
    return {
      finish_reason: finish,
      stream_info: last,
      usage: {
        processed_frames: processed,
        processing_time_ms: Math.round(performance.now() - started),
        decoded_frames: c.decodedFrames,
        dropped_frames: c.droppedFrames + refused,
      },
      tracks: pipeline.tracks(),
    };
  }

  async #pipeline(request: VideoTaskRequest, ctx: ProviderContext): Promise<FramePipeline> {
    try {
      const task = { id: ctx.taskId, projectId: ctx.projectId, request, services: this.deps.services ?? {} };
      const cp = ctx.resume;
      // A camera's ids go on above the last one; a file's pipeline is put back as it was (run()), ids included.
      return await FramePipeline.create(request, this.deps.models, task, cp?.live ? cp.next_track_id : 1);
    } catch (e) {
      if (isApiError(e) || e instanceof ProviderError) throw e;
      throw new ProviderError(this.name, `The pipeline's models could not be loaded: ${(e as Error).message}`);
    }
  }

  #classify(e: unknown, emitted: boolean): unknown {
    if (e instanceof DecodeError && RETRYABLE_DECODE.has(e.code)) {
      return new ProviderError(
        this.name,
        `${emitted ? 'Decoding stopped' : 'The video could not be opened'} (${e.code}): ${e.message}`,
      );
    }
    if (isApiError(e) || e instanceof ProviderError) return e;
    if ((e as Error)?.name === 'AbortError') return e;
    // The URL's resource was replaced between two of the decoder's requests: its bytes would be two files'.
    if (e instanceof SourceChangedError) return new ProviderError(this.name, e.message, undefined, 'source_changed');
    return new ProviderError(this.name, `Processing failed: ${(e as Error)?.message ?? String(e)}`);
  }
}
