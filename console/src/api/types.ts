// Shapes of the server's answers (docs/video.md, docs/vectors.md, docs/models.md), as far as the console reads them.
export interface List<T> {
  object: 'list';
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}

export interface Project {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  disabled_at: string | null;
  status: 'active' | 'disabled';
}
export interface CreatedKey extends ApiKey {
  key: string;
}

export interface UsageDay {
  day: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  frames: number;
  ms: number;
}
export interface UsageList {
  object: 'list';
  project_id: string;
  from: string;
  to: string;
  data: UsageDay[];
}

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

export interface VideoInput {
  type: 'video_url' | 'video_base64';
  url?: string;
  data?: unknown;
}
export interface VideoTask {
  id: string;
  object: 'video.task';
  status: TaskState;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  model: string;
  stream_url: string;
  progress: { frame_index: number | null; decoded_frames: number; dropped_frames: number; total_frames: number | null };
  usage: { processed_frames: number; processing_time_ms: number } | null;
  error: { code: string; message: string } | null;
  request?: { input?: VideoInput[]; steps?: Array<{ model: string; parameters?: unknown; when?: unknown }> };
  /** A presigned link to the staged input, if the server offers one (preferred over the request's URL). */
  input_url?: string | null;
  content_url?: string | null;
}

export interface Roi {
  left: number;
  top: number;
  width: number;
  height: number;
}
export interface Target {
  track_id: number;
  class: string;
  confidence: number;
  roi: Roi;
  text?: string;
}
export interface StreamChunk {
  id: string;
  object: 'mm.pipeline.chunk';
  model?: string;
  stream_info: {
    frame_index: number;
    total_frames: number | null;
    decoded_frames: number;
    dropped_frames: number;
    fps: number;
    elapsed_ms: number;
    /** The frame's time in the stream (files: from the video's start), when the server sends it. */
    stream_time_ms?: number;
  };
  delta: { results: Array<{ index: number; targets: Target[] }> };
  /** With an analytics step: the frame's events (docs/analytics.md, "Output"). */
  analytics?: { events?: AnalyticsEvent[] };
  finish_reason: 'stop' | 'max_frames' | 'error' | 'cancelled' | null;
  usage?: { processed_frames: number; processing_time_ms: number; decoded_frames: number; dropped_frames: number };
}

export interface AnalyticsEvent {
  id: string;
  type: string;
  rule: string;
  track_id: number | null;
  class?: string | null;
  direction?: 'in' | 'out';
  t_ms: number;
  frame_index: number;
}

export interface TrackSummary {
  track_id: number;
  class: string;
  first_frame: number;
  last_frame: number;
  frames_seen: number;
  best_confidence: number;
  feature_digest?: string;
}
export interface TaskResults {
  id: string;
  object: 'mm.pipeline.result';
  model: string;
  usage: { processed_frames: number; processing_time_ms: number };
  tracks: TrackSummary[];
}

export interface Collection {
  id: string;
  object: 'vectors.collection';
  name: string;
  description: string | null;
  model_id: string;
  dimensions: number;
  metric: string;
  item_count: number;
  created_at: string;
}
/** Where an item a video task's index step wrote is, in the video and in the task's result stream (docs/moments.md). */
export interface Moment {
  task_id: string;
  video: string;
  kind: 'segment' | 'track';
  start_ms: number;
  end_ms: number;
  score: number;
  thumbnail_url: string | null;
  stream_offset: number;
  item_ids: string[];
  track_id?: number;
  class?: string;
}
export interface VideoGroup {
  video: string;
  score: number;
  moments: Moment[];
}
export interface SearchResult {
  id: string;
  score: number;
  content_type: string;
  metadata: Record<string, unknown>;
  content_url: string | null;
  text?: string;
  moment?: Moment;
}
/** `results` for a plain search, `videos` with group_by "video". */
export interface SearchResponse {
  results?: SearchResult[];
  videos?: VideoGroup[];
  model: string;
  usage: { input_tokens: number };
}
export interface CollectionItem {
  id: string;
  content_type: string;
  metadata: Record<string, unknown>;
  content_url: string | null;
  text?: string;
  created_at: string;
}

export interface ModelServing {
  state: 'unloaded' | 'loading' | 'loaded';
  providers: string[] | null;
  devices: number[] | null;
  /** What runs the loaded session (the binding or the native engine), its CUDA graphs where asked, and whether the
   * native engine's inputs are page-locked; null unloaded. */
  engine: {
    kind: 'binding' | 'native';
    cuda_graphs: { on: boolean; note?: string } | null;
    pinned_inputs: boolean | null;
  } | null;
  sessions: { loaded: number; max: number } | null;
  batch: { max_size: number; max_delay_ms: number; sizes: number[] | null } | null;
  warmup: { batch_sizes: number[]; ms: number[] } | { skipped: string } | null;
  memory_bytes: number | null;
  loaded_at: string | null;
  last_used_at: string | null;
  requests: number;
  errors: number;
  p50_ms: number | null;
  queue_depth: number;
  pending: number;
  idle_unload_s: number;
  unloads: number;
}
export interface Model {
  id: string;
  object: 'model';
  task: string;
  description: string;
  builtin: boolean;
  prepared: boolean;
  sha256: string | null;
  origin: string | null;
  added_at: string | null;
  labels: number;
  settings: ModelSettings;
  serving: ModelServing;
}
/** A model's serving settings (null: the server's default). */
export interface ModelSettings {
  preload: boolean;
  idle_unload_s: number | null;
  providers: string[] | null;
  queue_depth: number | null;
  devices: number[] | null;
  sessions: number | null;
  max_batch_size: number | null;
  max_batch_delay_ms: number | null;
  batch_sizes: 'auto' | 'all' | number[] | null;
  warmup: 'auto' | 'on' | 'off' | null;
}
/** PATCH /admin/v1/models/:id: the fields to change; null puts one back to the server's default. */
export type ModelSettingsPatch = { [K in keyof ModelSettings]?: ModelSettings[K] | null };
export interface AddedModel extends Model {
  check: { summary: string; ms: number };
}

/** Analytics rules as the console draws them (docs/analytics.md, "Parameters"); pixels of the source frame. */
export type Point = [number, number];
export interface LineRule {
  id: string;
  points: [Point, Point];
  classes?: string[];
}
export interface ZoneRule {
  id: string;
  polygon: Point[];
  classes?: string[];
}
export interface AnalyticsRules {
  lines?: LineRule[];
  zones?: ZoneRule[];
  units?: 'pixels' | 'relative';
  [more: string]: unknown;
}
export interface LineTotals {
  in: number;
  out: number;
  active?: boolean;
}
export interface ZoneTotals {
  entered: number;
  exited: number;
  occupancy: number;
  max_occupancy?: number;
  active?: boolean;
}
export interface AnalyticsTotals {
  version: number;
  lines: Record<string, LineTotals>;
  zones: Record<string, ZoneTotals>;
  transitions?: Record<string, Record<string, number>>;
}
export interface AnalyticsView {
  object: 'video.analytics';
  task_id: string;
  status: TaskState;
  version: number;
  parameters: AnalyticsRules;
  totals: AnalyticsTotals | null;
  frame_size: { width: number; height: number } | null;
}
export interface AnalyticsRecount {
  object: 'video.analytics.recount';
  task_id: string;
  parameters: AnalyticsRules;
  frames: number;
  events: number;
  totals: AnalyticsTotals;
  recount_ms: number;
}

/** One of the node's NVIDIA cards (GET /admin/v1/gpus); a reading the card does not give is absent. */
export interface Gpu {
  object: 'gpu';
  index: number;
  uuid: string;
  name: string;
  error?: string;
  utilization?: number;
  memory_used_bytes?: number;
  memory_total_bytes?: number;
  decoder_utilization?: number;
  power_watts?: number;
  temperature_celsius?: number;
}

export interface GpuList {
  object: 'list';
  data: Gpu[];
  available: boolean;
  reason: string | null;
  driver_version: string | null;
}
