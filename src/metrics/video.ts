// Video metrics: frames and tasks counted by the worker as chunks are archived, live lag from a frame's
// arrival at the decoder (stream_info.received_at_ms, unix epoch ms) to its chunk being archived on the same
// clock, stream subscribers and resumes, webhook attempts by result, analytics events by type. Gauges that live in the database (tasks
// by state, the webhook outbox) are read by the video part's source at scrape time (watchVideo).
import { collected, metricsOn, type Sample } from './registry.js';
import { ValueFamily } from './series.js';
import { HistogramSeries } from './series.js';

/** The cumulative counters a chunk's stream_info carries (video/provider.ts StreamInfo). */
interface FrameInfo {
  decoded_frames: number;
  dropped_frames: number;
  received_at_ms?: number;
  reconnects?: number;
}

/**
 * Lag upper bounds in seconds: every 50 ms up to 3 s (where a live pipeline that keeps up lives, so a
 * quantile read from the buckets is within 50 ms of the true one), then coarser up to 2 min.
 */
export const LAG_BUCKETS: readonly number[] = [
  0.01,
  0.025,
  ...Array.from({ length: 60 }, (_, i) => Math.round((i + 1) * 50) / 1000),
  5,
  10,
  30,
  60,
  120,
];

const frames = new ValueFamily(
  'sightflow_video_frames_total',
  'Video frames by stage: decoded, processed (archived as a chunk) and dropped (decoded, not processed: sampling, decode failures, live backlog)',
);
const reconnects = new ValueFamily(
  'sightflow_video_reconnects_total',
  'Times a live source was reopened after it dropped',
);
const finished = new ValueFamily(
  'sightflow_video_tasks_finished_total',
  'Video tasks this process ran that reached a terminal state, by that state',
);
const lag = new HistogramSeries(LAG_BUCKETS);
collected(
  'sightflow_video_live_lag_seconds',
  "Live sources: time from a frame's arrival at the decoder (stream_info.received_at_ms) to its chunk being archived",
  'histogram',
  () => {
    const out: Sample[] = [];
    lag.samples('sightflow_video_live_lag_seconds', {}, out);
    return out;
  },
);
const resumes = new ValueFamily(
  'sightflow_video_stream_resumes_total',
  'Task stream subscriptions that resumed from a byte offset (?offset= or Last-Event-ID above 0)',
);
const taskResumes = new ValueFamily(
  'sightflow_video_task_resumes_total',
  'Video tasks handed to another worker after their worker died (docs/video.md, "When a worker dies"), by stage: queued (the reaper put it back with its checkpoint), continued (a worker took it up)',
);
const analyticsEvents = new ValueFamily(
  'sightflow_video_analytics_events_total',
  'Analytics events of the video tasks this process ran, by type (line.crossed, zone.entered, ...)',
);
const webhooks = new ValueFamily(
  'sightflow_video_webhook_attempts_total',
  'Webhook delivery attempts by result: delivered (2xx), refused (another status), error (no answer, or the URL not allowed)',
);

/** A chunk was archived (`prev`: the task's stream_info before it). */
export function observeChunk(info: FrameInfo, prev: FrameInfo, nowMs = Date.now()): void {
  if (!metricsOn) return;
  frames.add({ stage: 'processed' }, 1);
  countDeltas(info, prev);
  if (info.received_at_ms !== undefined) lag.observe(Math.max(0, nowMs - info.received_at_ms) / 1000);
}

/** A task ended here: its state, and the frames decoded or dropped after its last chunk. */
export function observeTaskEnd(
  status: string,
  usage: { decoded_frames: number; dropped_frames: number },
  last: FrameInfo,
): void {
  if (!metricsOn) return;
  finished.add({ status });
  countDeltas({ ...usage, reconnects: last.reconnects }, last);
}

function countDeltas(info: FrameInfo, prev: FrameInfo): void {
  const decoded = info.decoded_frames - prev.decoded_frames;
  const dropped = info.dropped_frames - prev.dropped_frames;
  if (decoded > 0) frames.add({ stage: 'decoded' }, decoded);
  if (dropped > 0) frames.add({ stage: 'dropped' }, dropped);
  const rc = (info.reconnects ?? 0) - (prev.reconnects ?? 0);
  if (rc > 0) reconnects.add({}, rc);
}

export function countResume(): void {
  if (metricsOn) resumes.add({});
}

/** A task whose worker died was queued to continue elsewhere, or a worker took one up. */
export function countTaskResume(stage: 'queued' | 'continued'): void {
  if (metricsOn) taskResumes.add({ stage });
}

/** Analytics events a running task produced (a recount's are not counted: they are the same events again). */
export function countAnalyticsEvents(events: ReadonlyArray<{ type: string }>): void {
  if (!metricsOn || events.length === 0) return;
  for (const e of events) analyticsEvents.add({ type: e.type });
}

export function countWebhookAttempt(result: 'delivered' | 'refused' | 'error'): void {
  if (metricsOn) webhooks.add({ result });
}

/** What the video part reports at scrape time. */
export interface VideoGauges {
  /** Tasks by non-terminal state, from the database (every node sees the same numbers). */
  tasksByState(): Promise<Record<string, number>>;
  /** Webhook deliveries still to send, and tasks whose delivery is not queued yet. */
  webhookBacklog(): Promise<number>;
  /** Tasks running in this process's worker. */
  running(): number;
  /** Open task stream subscriptions on this process. */
  subscribers(): number;
}

let sources: VideoGauges[] = [];
export function watchVideo(g: VideoGauges): () => void {
  sources.push(g);
  return () => {
    sources = sources.filter((x) => x !== g);
  };
}

collected(
  'sightflow_video_tasks',
  'Video tasks in the database by non-terminal state (the same on every node)',
  'gauge',
  async () => {
    const out: Sample[] = [];
    for (const g of sources.slice(0, 1))
      for (const [status, n] of Object.entries(await g.tasksByState())) out.push({ labels: { status }, value: n });
    return out;
  },
);
collected('sightflow_video_tasks_running', "Video tasks this process's worker is running now", 'gauge', () => [
  { value: sources.reduce((n, g) => n + g.running(), 0) },
]);
collected(
  'sightflow_video_stream_subscribers',
  'Open task stream subscriptions (GET /v1/video/tasks/:id/stream) on this process',
  'gauge',
  () => [{ value: sources.reduce((n, g) => n + g.subscribers(), 0) }],
);
collected(
  'sightflow_video_webhook_backlog',
  'Webhook deliveries not yet delivered (pending retries, and finished tasks whose delivery is not queued yet)',
  'gauge',
  async () => (sources.length ? [{ value: await sources[0]!.webhookBacklog() }] : []),
);
