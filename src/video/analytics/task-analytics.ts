// The analytics step of one running task, in the worker (its worker hooks, step.ts): every archived frame's
// targets go through the engine before the chunk is written, so the chunk carries `analytics: {events,
// totals}` and a recount of the archived targets sees exactly what the task saw. Rules changed by PUT reach
// the engine directly when the task runs in this process (update, through worker-steps.ts's runs), or through
// the task's analytics row, which the worker reads at every heartbeat (refresh). Totals are saved to that row about once a second and at the end, so GET
// /v1/video/tasks/:id/analytics answers without reading the stream. The boxes of every archived frame also go
// into the task's compact track log (track-log.ts), which a recount of the finished task reads. A task that
// another worker continues (its worker died) starts its log afresh too and replays its archived frames through
// the engine and into the log before its first new frame, so totals carry over and never go backwards
// (docs/video.md, "When a worker dies").
import type { Services } from '../../services/services.js';
import type { FrameOutput, VideoTaskRequest } from '../task-contract.js';
import { countAnalyticsEvents } from '../../metrics/video.js';
import type { WorkerStepEnd, WorkerStepRun } from '../pipeline/worker-step.js';
import { sql } from './analytics.sql.js';
import { AnalyticsEngine, type AnalyticsFrame, type AnalyticsSummary } from './engine.js';
import type { AnalyticsEvent, EventType } from './events.js';
import { parseAnalytics } from './rules.js';
import type { AnalyticsParameters } from './rules.schema.js';
import { TrackLogWriter } from './track-log.js';

const SAVE_EVERY_MS = 1000;

/** The analytics step's parameters in a request, or null without one. */
export function analyticsStep(request: Pick<VideoTaskRequest, 'steps'>): AnalyticsParameters | null {
  const step = request.steps?.find((s) => s?.model === 'analytics');
  return step ? parseAnalytics(step.parameters, 'parameters') : null;
}

/** One archived chunk's frame as the engine reads it (live and recount alike). */
export function analyticsFrame(
  frame: Pick<FrameOutput, 'stream_info' | 'delta'>,
  width: number,
  height: number,
): AnalyticsFrame {
  const info = frame.stream_info;
  return {
    t_ms: info.stream_time_ms ?? Math.round((info.frame_index * 1000) / (info.fps || 1)),
    frame_index: info.frame_index,
    width,
    height,
    tracks: frame.delta.results.flatMap((r) =>
      r.targets.map((t) => ({
        track_id: t.track_id,
        class: t.class,
        box: [t.roi.left, t.roi.top, t.roi.left + t.roi.width, t.roi.top + t.roi.height] as const,
      })),
    ),
  };
}

export class TaskAnalytics implements WorkerStepRun {
  readonly engine: AnalyticsEngine;
  #width = 0;
  #height = 0;
  #savedAt = 0;
  #saving: Promise<void> | null = null;
  #webhookEvents: ReadonlySet<EventType> = new Set();
  #hasWebhook = false;
  readonly #log = new TrackLogWriter();
  #blocks = 0;
  /** A block failed to write: the log stays unfinished and readers take the archive. */
  #logBroken = false;

  private constructor(
    private readonly s: Services,
    readonly taskId: string,
    params: AnalyticsParameters,
    version: number,
  ) {
    this.engine = new AnalyticsEngine(params, { idPrefix: `${taskId}.ae_` });
    if (version !== 1) this.engine.setRules(params, version);
  }

  /** The task's analytics: its row's rules when a PUT came first. */
  static async start(s: Services, taskId: string, request: VideoTaskRequest): Promise<TaskAnalytics> {
    const fromStep = analyticsStep(request);
    if (!fromStep) throw new Error('no analytics step in the request');
    await s.db.query(sql.create, [taskId, JSON.stringify(fromStep), null]);
    await s.db.query(sql.clearTracks, [taskId]);
    const [row] = await s.db.query(sql.get, [taskId]);
    const params = row ? parseAnalytics(row.parameters, 'parameters') : fromStep;
    const t = new TaskAnalytics(s, taskId, params, row ? Number(row.version) : 1);
    // The size an earlier run saw: a continued task's replayed frames need it before a new frame brings it.
    if (row?.frame_width && row?.frame_height) {
      t.#width = Number(row.frame_width);
      t.#height = Number(row.frame_height);
    }
    t.#webhookEvents = new Set(Array.isArray(row?.webhook_events) ? (row.webhook_events as EventType[]) : []);
    if (t.#webhookEvents.size > 0) t.#hasWebhook = (await s.db.query(sql.hasWebhook, [taskId]))[0]?.has === true;
    return t;
  }

  /** The source frame size, once a provider that knows it sent a frame. */
  get frameSize(): { width: number; height: number } | null {
    return this.#width > 0 && this.#height > 0 ? { width: this.#width, height: this.#height } : null;
  }

  /** Runs one frame through the engine; the frame to archive carries its events and totals (and speeds). */
  frame(frame: FrameOutput): FrameOutput {
    if (frame.frame_size) {
      this.#width = frame.frame_size.width;
      this.#height = frame.frame_size.height;
    }
    const { events, speeds } = this.engine.process(analyticsFrame(frame, this.#width, this.#height));
    countAnalyticsEvents(events);
    let delta = frame.delta;
    if (speeds && speeds.size > 0) {
      delta = {
        results: delta.results.map((r) => ({
          ...r,
          targets: r.targets.map((t) => (speeds.has(t.track_id) ? { ...t, speed_kmh: speeds.get(t.track_id)! } : t)),
        })),
      };
    }
    return { ...frame, delta, analytics: { events, totals: this.engine.counts() } };
  }

  /**
   * An archived frame of a continued task: through the engine and into the log. Its events already went out,
   * unless it is the `last` one, whose worker may have died before queuing them: those are queued again
   * (deliveries are keyed by event id, so one already queued is not queued twice).
   */
  async replay(frame: Pick<FrameOutput, 'stream_info' | 'delta' | 'analytics'>, last: boolean): Promise<void> {
    const f = analyticsFrame(frame, this.#width, this.#height);
    this.engine.process(f);
    this.#log.add(f);
    if (this.#log.full) await this.#writeLog();
    if (last) await this.#deliver((frame.analytics?.events ?? []) as AnalyticsEvent[]);
  }

  /** After a chunk was archived: log its boxes, queue its webhook events, save the totals now and then. */
  async archived(frame: FrameOutput): Promise<void> {
    this.#log.add(analyticsFrame(frame, this.#width, this.#height));
    if (this.#log.full) await this.#writeLog();
    await this.#deliver((frame.analytics?.events ?? []) as AnalyticsEvent[]);
    if (Date.now() - this.#savedAt >= SAVE_EVERY_MS && !this.#saving) {
      this.#savedAt = Date.now();
      this.#saving = this.save()
        .catch((e) => this.s.log.warn({ err: e, taskId: this.taskId }, 'analytics totals not saved'))
        .finally(() => {
          this.#saving = null;
        });
    }
  }

  async #writeLog(): Promise<void> {
    const block = this.#log.take();
    if (!block || this.#logBroken) return;
    try {
      await this.s.db.query(sql.appendTracks, [
        this.taskId,
        this.#blocks++,
        block.frames,
        JSON.stringify(block.classes),
        block.bytes,
      ]);
    } catch (e) {
      this.#logBroken = true;
      this.s.log.warn(
        { err: e, taskId: this.taskId },
        'analytics track log not written; a recount will read the archive',
      );
    }
  }

  async #deliver(events: readonly AnalyticsEvent[]): Promise<void> {
    if (this.#hasWebhook) {
      for (const e of events) {
        if (!this.#webhookEvents.has(e.type)) continue;
        const payload = JSON.stringify({
          type: e.type,
          timestamp: new Date().toISOString(),
          data: { task_id: this.taskId, ...e },
        });
        await this.s.db.query(sql.enqueueEvent, [e.id, this.taskId, `${e.type} ${e.id}`, payload]);
      }
    }
  }

  /** New rules from the next frame on (PUT in this process; checked by the caller). */
  update(params: unknown, version: number): void {
    this.engine.setRules(params as AnalyticsParameters, version);
  }

  /** Heartbeat: a PUT handled by another process is in the row. */
  async refresh(): Promise<void> {
    const [row] = await this.s.db.query(sql.version, [this.taskId]);
    if (row && Number(row.version) > this.engine.version)
      this.engine.setRules(parseAnalytics(row.parameters, 'parameters'), Number(row.version));
  }

  async save(): Promise<void> {
    await this.s.db.query(sql.saveSummary, [
      this.taskId,
      JSON.stringify(this.engine.summary()),
      this.#width || null,
      this.#height || null,
    ]);
  }

  /**
   * End of the task: open zone visits closed, final totals saved; the summary goes into the results and, with
   * the closing events, into the terminal chunk.
   */
  async finish(): Promise<WorkerStepEnd> {
    const events = this.engine.finish();
    countAnalyticsEvents(events);
    await this.#saving;
    await this.save().catch((e) => this.s.log.warn({ err: e, taskId: this.taskId }, 'analytics totals not saved'));
    // Without the final count a reader takes the archive: a log that failed to write costs speed, not counts.
    await this.#writeLog();
    if (!this.#logBroken) {
      await this.s.db
        .query(sql.setTrackLogFrames, [this.taskId, this.#log.written])
        .catch((e) => this.s.log.warn({ err: e, taskId: this.taskId }, 'analytics track log not finished'));
    }
    await this.#deliver(events).catch(() => {});
    const summary: AnalyticsSummary = this.engine.summary();
    return { results: { analytics: summary }, chunk: { analytics: { events, totals: summary } } };
  }
}
