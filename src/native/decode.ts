// TypeScript face of native/core/decode (native/addon/decode_binding.cc): the addon's FFmpeg Decoder, typed,
// with every option checked here and turned into the plain object the binding copies into its C++ struct.
// Every call runs on a thread of the addon's own (not the libuv pool, which a read waiting on a slow source
// would hold), so decoding never blocks the event loop nor starves sharp, fs or DNS. Failures reject with the addon's
// coded errors (src/native/load.ts): ERR_SIGHTFLOW_DECODE_<reason>, where reason is one of DECODE_FAILURES;
// src/video/source/decoder.ts, the decoder the pipeline uses, turns those into client errors. The addon built
// without FFmpeg (sightflow_novideo.node) has no decoder: making one throws the catalogue's video_unavailable,
// an ApiError that fails a video task with that code, where the missing class would be a TypeError.
import { errors } from '../base/errors.js';
import { addonFeatures, isNativeError, loadAddon, withCallerStack, type NativeError } from './load.js';

export type Sampling = { mode: 'fps'; value: number } | { mode: 'interval'; value: number } | { mode: 'keyframe' };

export interface FrameRange {
  start?: number;
  end?: number;
  /** Default seconds. */
  unit?: 'seconds' | 'frames';
}

export interface DecodeOptions {
  /** Default 1 frame per second of video time. */
  sampling?: Sampling;
  range?: FrameRange;
  /** Default 3000. */
  maxFrames?: number;
  /** Decoder threads (frame + slice threading); 0 (default) lets FFmpeg use one per core. */
  threads?: number;
  /** Output size; default the source size. With one side only, the other follows the aspect ratio. */
  width?: number;
  height?: number;
  /** Fit inside width x height without distortion (default true); false stretches to exactly that size. */
  keepAspect?: boolean;
  /** Limit for opening the input: connecting, the handshake, the format probe (default 15000). */
  openTimeoutMs?: number;
  /**
   * Limit for reading the stream information once open (default: openTimeoutMs); a live stream joined
   * mid-way needs its next key frame for that.
   */
  probeTimeoutMs?: number;
  /** Limit for each blocked read (default 15000); for a live input also the longest gap between two frames. */
  readTimeoutMs?: number;
  /**
   * The NVIDIA decoder (NVDEC, through FFmpeg's cuda hwaccel): 'none' (default) never asks; 'auto' and 'cuda'
   * ask when the codec has one and fall back to software when the host has no CUDA device. VideoInfo.hwaccel
   * says which path was taken (SIGHTFLOW_VIDEO_HWACCEL).
   */
  hwaccel?: 'auto' | 'none' | 'cuda';
  /** The CUDA device (an ordinal of those CUDA shows the process) the NVIDIA decoder runs on; default 0. */
  hwaccelDevice?: number;
  /**
   * Continue after the frame this cursor was taken at (a file; the same input and options as the decode that
   * made it): the frames after it come with the same indices, times, pixels and counters as from one decode
   * since the start. `maxFrames` stays the whole task's cap: the cursor carries the frames emitted so far
   * (emittedFrames), so pass the task's maxFrames, not what is left. See VideoInfo.resumedBy and docs/video.md,
   * "When a worker dies"; a cursor whose frame cannot be found again fails open() with resume_mismatch.
   */
  resume?: DecoderCursor;
}

/**
 * What a file decoder needs to continue exactly after one emitted frame (a frame's `cursor`), JSON-able, to be
 * stored with the work done up to that frame and handed back as DecodeOptions.resume. Treat it as opaque: its
 * fields are checked, not interpreted, by anything but the decoder.
 */
export interface DecoderCursor {
  /** Format version (1). */
  v: number;
  /** The frame's index and time. */
  index: number;
  ptsMs: number;
  /** Its presentation time in stream ticks; null when its packets carried none (AVI): it is found by index. */
  pts: number | null;
  /** Stream ticks of the last key frame at or before it, where a resume seeks. */
  keyTs: number;
  /** Stream ticks that times count from; null when the stream had no start time and no frame yet set one. */
  startPts: number | null;
  /** The sampler: its origin in seconds (null until a frame range fixed it) and its next sample's number. */
  origin: number | null;
  nextSample: number;
  /** Dts of the last packet read when the frame was emitted (key-frame sampling counts packets as read). */
  readDts: number | null;
  /** The counters just after the frame was emitted. */
  decodedFrames: number;
  droppedFrames: number;
  emittedFrames: number;
  decodeFailures: number;
  skippedDecodes: number;
  /** XXH64 (16 hex digits) of the options and source facts that shape the frames: a cursor fits only them. */
  setup: string;
  /** XXH64 (16 hex digits) of the frame's RGB24 output: proves a resume found the same frame again. */
  hash: string;
}

export interface VideoInfo {
  width: number;
  height: number;
  /** Size of every RGB24 frame this decoder outputs. */
  outWidth: number;
  outHeight: number;
  /** Source frame rate (average); 0 when the container does not say. */
  fps: number;
  totalFrames: number | null;
  durationMs: number | null;
  seekable: boolean;
  codec: string;
  format: string;
  /**
   * The input, or for http(s) the URL FFmpeg ended at after following redirects itself. FFmpeg has no
   * switch to refuse redirects, so a caller with a URL policy checks this too (and aborts on a refusal).
   */
  finalUrl: string;
  /**
   * No end known in advance: rtsp(s), or a network input with no length or duration (a live HLS playlist, an
   * endless MPEG-TS or FLV response). The addon then reads it in the background and keeps only the newest
   * sampled frame: a frame not read before the next one replaced it is dropped (lateDrops). A frame sent
   * ahead of its time (a burst: an HLS segment) waits instead, while the reader is under a second behind.
   */
  live: boolean;
  /** Where frames are decoded: 'cuda' (the NVIDIA decoder) or 'software'. */
  hwaccel: 'cuda' | 'software';
  /** With the NVIDIA decoder asked for and software taken: why (no CUDA device, a codec without it, ...). */
  hwaccelFallback: string | null;
  /** The CUDA device decoding, when hwaccel is 'cuda'; null in software. */
  hwaccelDevice: number | null;
  /**
   * With `resume`: how the cursor's frame was found again, 'seek' (from the key frame before it) or 'replay'
   * (a decode from the start without output, after the seek landed wrong); null without resume.
   */
  resumedBy: 'seek' | 'replay' | null;
}

export interface NativeDecodeStats {
  decodedFrames: number;
  droppedFrames: number;
  emittedFrames: number;
  decodeFailures: number;
  /** Live inputs: sampled frames replaced by a newer one before they were read (part of droppedFrames). */
  lateDrops: number;
}

/** One read: `count` frames of `frameBytes` bytes each, packed in `data`, with their metadata. */
export interface NativeFrameBatch {
  /** 'more': frames may follow; 'end': end of input or range; 'max_frames': the cap was reached. */
  status: 'more' | 'end' | 'max_frames';
  count: number;
  frameBytes: number;
  data: Uint8Array;
  index: Float64Array;
  ptsMs: Float64Array;
  keyframe: Uint8Array;
  /** Wall-clock time (unix epoch ms) the decoder received each frame. */
  wallMs: Float64Array;
  /** A file's cursor after each frame (see DecoderCursor); null for a live input. */
  cursors: DecoderCursor[] | null;
  stats: NativeDecodeStats;
}

/** The decoder's failure reasons; each is the code ERR_SIGHTFLOW_DECODE_<REASON in capitals>. */
export const DECODE_FAILURES = [
  'input_not_found',
  'empty_input',
  'invalid_video',
  'no_video_stream',
  'unsupported_codec',
  'decode_failed',
  'fetch_failed',
  'source_limit_exceeded',
  'timeout',
  'aborted',
  'out_of_memory',
  'not_open',
  'resume_mismatch',
] as const;
export type DecodeFailure = (typeof DECODE_FAILURES)[number];

/** A failed read also carries the counters up to the failure. */
export interface DecodeNativeError extends NativeError {
  stats?: NativeDecodeStats;
}

/** The decoder's reason for a native decode failure, or null for any other error. */
export function decodeFailure(e: unknown): DecodeFailure | null {
  if (!isNativeError(e, 'DECODE')) return null;
  const reason = e.code.slice('ERR_SIGHTFLOW_DECODE_'.length).toLowerCase();
  return (DECODE_FAILURES as readonly string[]).includes(reason) ? (reason as DecodeFailure) : null;
}

/** The decoder's network requests (native/core/decode/guarded_io.h), served by src/media/guarded-source.ts. */
export type NetRequestHandler = (
  kind: 'open' | 'more' | 'close',
  id: number,
  url: string,
  offset: number,
  end: number,
) => void;

interface AddonDecoder {
  open(opts: Record<string, unknown>): Promise<VideoInfo>;
  netHead(id: number, size: number, seekable: boolean, finalUrl: string): void;
  netPush(id: number, chunk: Uint8Array): number;
  netEnd(id: number): void;
  netFail(id: number, code: string, message: string, fatal: boolean): void;
  read(max: number, target?: Uint8Array): Promise<NativeFrameBatch>;
  close(): Promise<void>;
  abort(): Promise<void>;
}
interface DecodeAddon {
  /** Absent from the build without FFmpeg. */
  Decoder?: new () => AddonDecoder;
}

/** Whether the loaded addon can decode video (false for the build without FFmpeg). */
export function videoAvailable(): boolean {
  return addonFeatures().video;
}

function positive(
  param: string,
  v: unknown,
  opts: { integer?: boolean; allowZero?: boolean; max?: number } = {},
): number {
  const ok =
    typeof v === 'number' &&
    Number.isFinite(v) &&
    (opts.allowZero ? v >= 0 : v > 0) &&
    (!opts.integer || Number.isInteger(v)) &&
    (opts.max === undefined || v <= opts.max);
  if (!ok) {
    const kind = opts.integer ? 'integer' : 'number';
    const bound = opts.allowZero ? 'at least 0' : 'greater than 0';
    const upper = opts.max === undefined ? '' : ` and at most ${opts.max}`;
    throw errors.invalidParam(param, `Expected ${kind} ${bound}${upper} for ${param} but received ${String(v)}`);
  }
  return v as number;
}

/** A cursor's integer fields and their least value (times and stream ticks may be negative). */
const CURSOR_INTEGERS = {
  index: 0,
  ptsMs: Number.MIN_SAFE_INTEGER,
  keyTs: Number.MIN_SAFE_INTEGER,
  decodedFrames: 0,
  droppedFrames: 0,
  emittedFrames: 1,
  decodeFailures: 0,
  skippedDecodes: 0,
} as const;
const CURSOR_NULLABLE_INTEGERS = ['pts', 'startPts', 'readDts'] as const;

/**
 * Checks a cursor (it comes back from storage, so anything may arrive) and copies its fields: a bad one is a
 * clear invalid_parameter error on `resume`, never something the addon has to refuse.
 */
export function checkCursor(c: unknown): DecoderCursor {
  const bad = (what: string): never => {
    throw errors.invalidParam('resume', `Expected a decoder cursor (version 1) for resume but ${what}`);
  };
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return bad(`received ${String(c)}`);
  const o = c as Record<string, unknown>;
  if (o.v !== 1) bad(`received version ${String(o.v)}`);
  const int = (k: string, v: unknown, min: number = Number.MIN_SAFE_INTEGER) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) bad(`${k} is ${String(v)}`);
  };
  for (const [k, min] of Object.entries(CURSOR_INTEGERS)) int(k, o[k], min);
  for (const k of CURSOR_NULLABLE_INTEGERS) if (o[k] !== null) int(k, o[k]);
  if (o.origin !== null && (typeof o.origin !== 'number' || !Number.isFinite(o.origin) || Math.abs(o.origin) > 1e15))
    bad(`origin is ${String(o.origin)}`);
  if (typeof o.nextSample !== 'number' || !Number.isFinite(o.nextSample) || o.nextSample < 0)
    bad(`nextSample is ${String(o.nextSample)}`);
  for (const k of ['setup', 'hash'] as const) {
    if (typeof o[k] !== 'string' || !/^[0-9a-f]{16}$/.test(o[k] as string)) bad(`${k} is not 16 hex digits`);
  }
  const out: Record<string, unknown> = {
    v: 1,
    origin: o.origin,
    nextSample: o.nextSample,
    setup: o.setup,
    hash: o.hash,
  };
  for (const k of [...Object.keys(CURSOR_INTEGERS), ...CURSOR_NULLABLE_INTEGERS]) out[k] = o[k];
  return out as unknown as DecoderCursor;
}

/** Checks every option and builds the plain object the addon copies into its C++ struct. */
export function nativeOptions(input: string, o: DecodeOptions): Record<string, unknown> {
  if (typeof input !== 'string' || input.length === 0) {
    throw errors.invalidParam('input', `Expected a file path or URL for input but received ${String(input)}`);
  }
  const sampling = o.sampling ?? { mode: 'fps', value: 1 };
  const out: Record<string, unknown> = { input, mode: sampling.mode };
  if (sampling.mode === 'fps' || sampling.mode === 'interval') {
    out.value = positive('sampling.value', sampling.value);
  } else if (sampling.mode !== 'keyframe') {
    throw errors.invalidParam(
      'sampling.mode',
      `Expected one of fps, interval, keyframe for sampling.mode but received ${String((sampling as { mode: unknown }).mode)}`,
    );
  }
  const range = o.range ?? {};
  const unit = range.unit ?? 'seconds';
  if (unit !== 'seconds' && unit !== 'frames') {
    throw errors.invalidParam(
      'range.unit',
      `Expected one of seconds, frames for range.unit but received ${String(unit)}`,
    );
  }
  out.unit = unit;
  if (range.start !== undefined)
    out.start = positive('range.start', range.start, { allowZero: true, integer: unit === 'frames' });
  if (range.end !== undefined) out.end = positive('range.end', range.end, { integer: unit === 'frames' });
  if (range.start !== undefined && range.end !== undefined && range.end <= range.start) {
    throw errors.invalidParam(
      'range.end',
      `Expected range.end greater than range.start (${range.start}) but received ${range.end}`,
    );
  }
  out.maxFrames = positive('max_frames', o.maxFrames ?? 3000, { integer: true, max: 1e9 });
  out.threads = positive('threads', o.threads ?? 0, { integer: true, allowZero: true, max: 64 });
  if (o.width !== undefined) out.width = positive('width', o.width, { integer: true, max: 16384 });
  if (o.height !== undefined) out.height = positive('height', o.height, { integer: true, max: 16384 });
  out.keepAspect = o.keepAspect ?? true;
  out.openTimeoutMs = positive('openTimeoutMs', o.openTimeoutMs ?? 15000, { integer: true, max: 3_600_000 });
  if (o.probeTimeoutMs !== undefined)
    out.probeTimeoutMs = positive('probeTimeoutMs', o.probeTimeoutMs, { integer: true, max: 3_600_000 });
  out.readTimeoutMs = positive('readTimeoutMs', o.readTimeoutMs ?? 15000, { integer: true, max: 3_600_000 });
  const hw = o.hwaccel ?? 'none';
  if (hw !== 'none' && hw !== 'auto' && hw !== 'cuda') {
    throw errors.invalidParam('hwaccel', `Expected one of auto, none, cuda for hwaccel but received ${String(hw)}`);
  }
  out.hwaccel = hw;
  if (o.hwaccelDevice !== undefined)
    out.hwaccelDevice = positive('hwaccelDevice', o.hwaccelDevice, { integer: true, allowZero: true, max: 255 });
  if (o.resume !== undefined) out.resume = checkCursor(o.resume);
  return out;
}

/** Checks read()'s arguments against the decoder's frame size (outWidth * outHeight * 3 bytes). */
export function checkRead(maxCount: number, target: Uint8Array | undefined, frameBytes: number): void {
  positive('maxCount', maxCount, { integer: true, max: 1e9 });
  if (target !== undefined && (!(target instanceof Uint8Array) || target.byteLength < frameBytes)) {
    throw errors.invalidParam('target', `Expected a Uint8Array of at least ${frameBytes} bytes for target`);
  }
}

/**
 * One native decoder: open once, read batches, then close (or abort from anywhere to stop a blocked read).
 * The addon serialises open, read and close on the decoder; abort is not serialised, so it stops them.
 */
export class NativeDecoder {
  readonly #native: AddonDecoder;
  #frameBytes = 0;

  /** Throws video_unavailable (an ApiError) when the loaded addon is the build without FFmpeg. */
  constructor() {
    const { Decoder } = loadAddon<DecodeAddon>();
    if (!videoAvailable() || typeof Decoder !== 'function') throw errors.videoUnavailable();
    this.#native = new Decoder();
  }

  /**
   * Opens a file path, an rtsp URL, or an http(s) URL. An http(s) input needs `onNet`: every byte of it (and of
   * whatever it names: HLS playlists and segments) is then requested there and answered through net*().
   */
  async open(input: string, options: DecodeOptions = {}, onNet?: NetRequestHandler): Promise<VideoInfo> {
    const caller = new Error();
    const info = await withCallerStack(
      this.#native.open({ ...nativeOptions(input, options), ...(onNet ? { onNet } : {}) }),
      caller,
    );
    this.#frameBytes = info.outWidth * info.outHeight * 3;
    return info;
  }

  /**
   * Decodes up to `maxCount` sampled frames, into `target` when given (at most target.byteLength / frameBytes
   * of them, where the returned data is a view of target) or into fresh memory.
   */
  async read(maxCount: number, target?: Uint8Array): Promise<NativeFrameBatch> {
    checkRead(maxCount, target, this.#frameBytes);
    return await withCallerStack(this.#native.read(maxCount, target));
  }

  /** The answers to onNet requests (see NetSink in src/media/guarded-source.ts). */
  readonly net = {
    head: (id: number, size: number, seekable: boolean, finalUrl: string) =>
      this.#native.netHead(id, size, seekable, finalUrl),
    push: (id: number, chunk: Uint8Array) => this.#native.netPush(id, chunk),
    end: (id: number) => this.#native.netEnd(id),
    fail: (id: number, code: string, message: string, fatal: boolean) => this.#native.netFail(id, code, message, fatal),
  };

  /** Frees every FFmpeg object and closes the input, off the JS thread, after any call in flight. */
  close(): Promise<void> {
    return this.#native.close();
  }

  /** Stops at once (a read blocked on the network fails with 'aborted' as soon as FFmpeg next polls its interrupt
   * check: docs/video.md, "Live sources"), then frees like close(). */
  abort(): Promise<void> {
    return this.#native.abort();
  }
}
