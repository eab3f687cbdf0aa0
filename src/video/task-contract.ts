// The video task contract, which every room of the video part imports and none owns: the task's states and
// request limits, the job a worker runs, what a provider emits per frame (the chunk's fields) and the provider
// interface between the task machinery (tasks/, worker/, stream/) and what processes a video (source/, steps/). A worker runs a task through an ordered list of
// providers; before the first frame is emitted a provider error moves on to the next provider (up to 2
// retries), after it the task fails.

import type { SourceIdentity } from '../media/guarded-source.js';

/** Decoded size limit of a video_base64 input: 20 MB fits, as base64 (4 characters for 3 bytes), in the 30 MB
 * JSON body limit. */
export const VIDEO_BASE64_MAX_BYTES = 20 * 1024 * 1024;
export const DEFAULT_MAX_FRAMES = 3000;
export const DEFAULT_SAMPLING = { mode: 'fps', value: 1 } as const;
export const TASK_STATES = [
  'pending',
  'running',
  'streaming',
  'succeeded',
  'failed',
  'cancelling',
  'cancelled',
] as const;
export type TaskState = (typeof TASK_STATES)[number];
export const TERMINAL_STATES: readonly TaskState[] = ['succeeded', 'failed', 'cancelled'];
/** Schemes a video_url may use: files and live streams over http(s), live cameras over RTSP. */
export const VIDEO_URL_SCHEMES = ['http:', 'https:', 'rtsp:', 'rtsps:'] as const;
export const DEFAULT_RECONNECT = { max_attempts: 5, max_seconds: 60 } as const;
export const DEFAULT_STALL_TIMEOUT_SECONDS = 15;
/** What the worker needs: the normalised request (defaults filled in) and where the video is. */
export interface TaskJob {
  request: VideoTaskRequest;
  source: { url?: string; blob_key?: string };
  /** The W3C traceparent of the request that queued it: the worker's calls and log lines join that trace. */
  traceparent?: string;
}

/** A target of a stream chunk. `text` (ocr) and `feature_digest` (feature) are added by later steps. */
export interface StreamTarget {
  track_id: number;
  class: string;
  confidence: number;
  roi: { left: number; top: number; width: number; height: number };
  attributes?: Record<string, unknown>;
  text?: string;
  feature_digest?: string;
  /** With an analytics step that has a speed calibration. */
  speed_kmh?: number;
}

export interface StreamInfo {
  frame_index: number;
  total_frames: number | null;
  decoded_frames: number;
  dropped_frames: number;
  fps: number;
  elapsed_ms: number;
  /** The frame's stream time (ms): from the video start, or for live sources from the first frame received. */
  stream_time_ms?: number;
  /** When the decoder received the frame (unix epoch ms): a live client's lag is now minus this. */
  received_at_ms?: number;
  live?: boolean;
  /** Live: how often the source was reopened so far. */
  reconnects?: number;
  /** Live, on the first chunk after another worker took the task over: wall-clock ms since the last frame before it. */
  gap_ms?: number;
}

/**
 * What continuing a task after an archived chunk needs (docs/video.md, "When a worker dies"), stored by the
 * fenced append of that chunk. A live source continues from its live edge, so its checkpoint (stored with every
 * chunk) holds only counters and where the ids go on; a file continues exactly after the checkpoint's frame
 * (stored with every few chunks: the frames archived after it are processed again), so its checkpoint also
 * holds the decoder's cursor (src/native/decode.ts) and the frame pipeline's state (its trackers and ids,
 * FramePipeline.snapshot()). Version 1 (live only) is still read; a reader that finds a version it does not
 * know does not resume.
 */
export interface TaskCheckpoint {
  v: 1 | 2;
  /** Frame chunks archived up to and including this one. */
  frames: number;
  frame_index: number;
  stream_time_ms: number;
  /** The wall clock (unix ms) when the last frame was received: the gap is measured from it. */
  received_at_ms: number;
  decoded_frames: number;
  dropped_frames: number;
  reconnects: number;
  elapsed_ms: number;
  /** Above every track id the task handed out so far: the next worker starts its ids here (live). */
  next_track_id: number;
  live: boolean;
  /** A file: the decoder's cursor after the last archived frame. */
  decoder?: unknown;
  /** A file: the frame pipeline's state after the last archived frame. */
  pipeline?: unknown;
  /** A file read from an http(s) URL: what identifies its bytes; a continued run fails source_changed unless
   * the URL still serves this resource. Absent for a staged upload. */
  source?: SourceIdentity;
}

export const CHECKPOINT_VERSION = 2;

/** A stored checkpoint this version can continue from, or null. */
export function readCheckpoint(v: unknown): TaskCheckpoint | null {
  const c = (typeof v === 'string' ? JSON.parse(v) : v) as Partial<TaskCheckpoint> | null;
  if (!c || typeof c !== 'object') return null;
  if (c.v === 1 ? c.live !== true : c.v !== CHECKPOINT_VERSION) return null;
  if (c.live !== true && (typeof c.decoder !== 'object' || !c.decoder || typeof c.pipeline !== 'object' || !c.pipeline))
    return null;
  const nums = [
    c.frames,
    c.frame_index,
    c.stream_time_ms,
    c.received_at_ms,
    c.decoded_frames,
    c.dropped_frames,
    c.reconnects,
    c.elapsed_ms,
    c.next_track_id,
  ];
  if (c.source !== undefined && !isIdentity(c.source)) return null;
  return nums.every((n) => typeof n === 'number' && Number.isFinite(n)) ? (c as TaskCheckpoint) : null;
}

const isIdentity = (s: unknown): s is SourceIdentity => {
  const o = s as Partial<SourceIdentity> | null;
  const text = (v: unknown) => v === undefined || typeof v === 'string';
  return (
    !!o &&
    typeof o === 'object' &&
    Number.isSafeInteger(o.length) &&
    text(o.etag) &&
    text(o.last_modified) &&
    (o.etag !== undefined || o.last_modified !== undefined)
  );
};

/** What a provider emits per processed frame; the worker wraps it into an mm.pipeline.chunk. */
export interface FrameOutput {
  stream_info: StreamInfo;
  delta: { results: Array<{ index: number; targets: StreamTarget[] }> };
  /** Set by the worker with an analytics step (analytics/task-analytics.ts). */
  analytics?: { events: unknown[]; totals: Record<string, unknown> };
  /** The source frame size, when the provider knows it (relative analytics rules need it); not archived. */
  frame_size?: { width: number; height: number };
  /** Set by a provider that can continue the task elsewhere (a local one): the task's next track id and, for a
   * file, the decoder's cursor and the pipeline's state after this frame (and a URL's identity). The worker then
   * stores a checkpoint with the chunk (TaskCheckpoint); not archived. */
  resumable?: {
    next_track_id: number;
    decoder?: unknown;
    pipeline?: unknown;
    source?: SourceIdentity;
    /** A file's frame that could carry a checkpoint but none is due (ProviderContext.checkpointDue): no state
     * was taken, and the task's stored checkpoint stays the one of an earlier chunk. */
    deferred?: true;
  };
}

export interface TrackSummary {
  track_id: number;
  class: string;
  first_frame: number;
  last_frame: number;
  frames_seen: number;
  best_confidence: number;
  /** `dim=<int>;norm=<decimal>` of the track's mean feature vector; omitted without a feature step. */
  feature_digest?: string;
}

export interface ProviderResult {
  finish_reason: 'stop' | 'max_frames';
  /** Last stream_info (the terminal chunk repeats it). */
  stream_info: StreamInfo;
  usage: { processed_frames: number; processing_time_ms: number; decoded_frames: number; dropped_frames: number };
  tracks: TrackSummary[];
}

export interface ProviderContext {
  taskId: string;
  projectId: string;
  /** The `traceparent` of the request that queued the task (the remote node's task joins its trace). */
  traceparent?: string;
  /** Aborted on cancel (at the next chunk boundary at the latest) and on shutdown; must abort the upstream fetch. */
  signal: AbortSignal;
  /** Appends one frame's output to the archive; resolves once stored. Returns false when the task was cancelled. */
  emit(frame: FrameOutput): Promise<boolean>;
  /**
   * Runs the worker's steps (steps/worker-steps.ts: analytics) over a frame's output, in frame order, and
   * returns it as it will be archived: a provider in the worker's process calls it before its own steps' chunk
   * hooks so that they see what those add (index: the analytics events); emit then does not run them again.
   */
  complete?(frame: FrameOutput): FrameOutput;
  /**
   * Set when this run continues a task another worker began (its worker died): the task's stored checkpoint,
   * of its last archived chunk (live) or of a chunk at most a few before it (a file: its provider continues
   * after that chunk, and the frames it processes again up to the last archived one are not archived twice:
   * complete() hands back the archived output, emit() stores nothing). A provider that cannot continue from it
   * throws a ProviderError (the task then fails).
   */
  resume?: TaskCheckpoint;
  /**
   * Whether the frame about to be emitted should carry a file checkpoint (FrameOutput.resumable with the
   * pipeline's state): the worker stores one every few chunks, not with each (docs/video.md, "What a
   * checkpoint costs"). Absent: every frame.
   */
  checkpointDue?(): boolean;
  /**
   * After the signal aborted: whether the task goes on on another worker from the checkpoint of its last chunk
   * (this worker lost its lease, or shut down and hands it on), so steps leave what is open to that worker.
   */
  handedOn?(): boolean;
}

/**
 * The validated request body (POST /v1/video/process), with a video_base64 input already staged to the
 * blob store: `input[0].url` is then a local file path under the blob store, never the base64 data.
 */
export interface VideoTaskRequest {
  input: Array<{
    type: 'video_url' | 'video_base64';
    url?: string;
    data?: string;
    sampling?: { mode: 'fps'; value: number } | { mode: 'interval'; value: number } | { mode: 'keyframe' };
    range?: { start?: number; end?: number; unit?: 'seconds' | 'frames' };
    max_frames?: number;
    reconnect?: { max_attempts?: number; max_seconds?: number };
    stall_timeout_seconds?: number;
  }>;
  steps: Array<{
    model: string;
    parameters?: Record<string, unknown>;
    when?: { class_is?: string[]; min_confidence?: number };
  }>;
  model?: string;
  tracker?: { type?: 'sort' | 'bytetrack'; max_age?: number; min_hits?: number; iou_threshold?: number };
  /** Where the worker also publishes the task's analytics (mqtt/: the MQTT broker, for a camera). */
  publish?: { mqtt?: { camera: string } };
}

export interface VideoProvider {
  /** Shown in task errors and logs: "local", "remote:https://gpu-2:8080". */
  readonly name: string;
  /** It continues a task from ProviderContext.resume; a task that continues runs on no other provider. */
  readonly resumes?: boolean;
  /**
   * Processes the task, calling ctx.emit once per processed frame in order. Throws ProviderError for a
   * provider failure (retryable before the first emit) or an ApiError for a bad input (never retried).
   */
  run(
    request: VideoTaskRequest,
    source: { path?: string; url?: string },
    ctx: ProviderContext,
  ): Promise<ProviderResult>;
}

/** A provider-side failure (HTTP 4xx/5xx of a remote node, a lost connection, a local crash of a step). */
export class ProviderError extends Error {
  /** `code`: a catalogued task error code that says more than provider_error (e.g. source_lost); after the
   * first chunk the task fails with it and this message. */
  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
