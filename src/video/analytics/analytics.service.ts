// The analytics endpoints' use cases (analytics.routes.ts): totals so far, a rule change on a running task, a
// recount of a finished task from its stored tracks (no decoding), and the heatmap of where the tracks were.
// Project-scoped like every video call: another project's task id is a 404. What it needs of the video part
// comes in as ports (AnalyticsPorts), handed over where the parts are wired.
import { errors } from '../../base/errors.js';
import type { Services } from '../../services/services.js';
import type { VideoTaskRequest } from '../task-contract.js';
import type { StreamArchive } from '../stream/stream-archive.js';
import { TERMINAL_STATES, type TaskState } from '../task-contract.js';
import type { LiveSteps } from '../pipeline/worker-step.js';
import type { PlannedStep } from '../pipeline/frame-step.js';
import { sql } from './analytics.sql.js';
import { AnalyticsEngine, type AnalyticsSummary } from './engine.js';
import { parseAnalytics } from './rules.js';
import type { AnalyticsParameters } from './rules.schema.js';
import { analyticsStep, TaskAnalytics } from './task-analytics.js';
import { forEachStoredFrame } from './stored-tracks.js';
import { HeatmapGrid, heatmapSize, HEATMAP_DEFAULT_WIDTH } from './heatmap.js';
import type { HeatmapQuery } from './analytics.schemas.js';
import { ANCHORS } from './rules.schema.js';
import { anchorOf } from './rules.js';

export interface AnalyticsView {
  object: 'video.analytics';
  task_id: string;
  status: TaskState;
  version: number;
  parameters: AnalyticsParameters;
  /** null until the worker saved its first totals. */
  totals: AnalyticsSummary | null;
  /** The source frame size, once the worker saw a frame (rules in `pixels` are in its coordinates). */
  frame_size: { width: number; height: number } | null;
}

export interface Heatmap {
  png: Buffer;
  width: number;
  height: number;
  /** Anchors drawn, and the stored frames they came from (after the time window). */
  points: number;
  frames: number;
}

const sizeOf = (w: unknown, h: unknown) =>
  Number(w) > 0 && Number(h) > 0 ? { width: Number(w), height: Number(h) } : null;

/** What the analytics endpoints need of the video part. */
export interface AnalyticsPorts {
  /** The stream archive (a recount or heatmap of a task without a track log reads its chunks). */
  archive: StreamArchive;
  /** The worker-side runs of the tasks this process runs (none where it runs no worker). */
  live: LiveSteps;
  /** Checks and plans a request's steps (the analytics step's classes are the labels of the detect step before it). */
  planSteps(request: VideoTaskRequest): Promise<readonly PlannedStep[]>;
}

export class AnalyticsService {
  private readonly archive: StreamArchive;

  constructor(
    private readonly s: Pick<Services, 'db'>,
    private readonly ports: AnalyticsPorts,
  ) {
    this.archive = ports.archive;
  }

  async #task(projectId: string, id: string): Promise<{ status: TaskState; request: VideoTaskRequest }> {
    const [row] = await this.s.db.query(sql.task, [id, projectId]);
    if (!row) throw errors.notFound('video task', id);
    return { status: row.status as TaskState, request: (row.job as { request: VideoTaskRequest }).request };
  }

  /** Class names the analytics step may name: the labels of the detect step before it. */
  async #labels(request: VideoTaskRequest): Promise<readonly string[]> {
    const plan = await this.ports.planSteps(request);
    const at = plan.findIndex((p) => p.kind === 'analytics');
    return plan.slice(0, at < 0 ? plan.length : at).findLast((p) => p.labels !== undefined)?.labels ?? [];
  }

  /** The task's analytics run when it runs in this process. */
  #running(id: string): TaskAnalytics | undefined {
    const run = this.ports.live.get(id, 'analytics');
    return run instanceof TaskAnalytics ? run : undefined;
  }

  /** Totals so far: from the worker when the task runs in this process, else as last saved. */
  async get(projectId: string, id: string): Promise<AnalyticsView> {
    const task = await this.#task(projectId, id);
    const step = analyticsStep(task.request);
    if (!step) throw errors.analyticsUnavailable(id, 'the task has no analytics step');
    const running = this.#running(id);
    const [row] = await this.s.db.query(sql.get, [id]);
    const saved = sizeOf(row?.frame_width, row?.frame_height);
    if (running) {
      return {
        object: 'video.analytics',
        task_id: id,
        status: task.status,
        version: running.engine.version,
        parameters: running.engine.parameters,
        totals: running.engine.summary(),
        frame_size: running.frameSize ?? saved,
      };
    }
    return {
      object: 'video.analytics',
      task_id: id,
      status: task.status,
      version: row ? Number(row.version) : 1,
      parameters: row ? (row.parameters as AnalyticsParameters) : step,
      totals: (row?.summary as AnalyticsSummary | null) ?? null,
      frame_size: saved,
    };
  }

  /** New rules for a pending or running task: applied from its next sampled frame, version + 1. */
  async put(projectId: string, id: string, input: unknown): Promise<AnalyticsView> {
    const task = await this.#task(projectId, id);
    const step = analyticsStep(task.request);
    if (!step) throw errors.analyticsUnavailable(id, 'the task has no analytics step');
    if ((TERMINAL_STATES as readonly string[]).includes(task.status) || task.status === 'cancelling') {
      throw errors.analyticsUnavailable(
        id,
        `the task is ${task.status}; rules change only on a pending or running task (POST .../analytics/recount counts a finished one with new rules)`,
      );
    }
    const params = parseAnalytics(input, 'parameters', await this.#labels(task.request));
    const version = await this.s.db.tx(async (q) => {
      await q.query(sql.create, [id, JSON.stringify(step), null]);
      const [row] = await q.query(sql.lockForChange, [id]);
      const v = Number(row!.version) + 1;
      await q.query(sql.setRules, [id, JSON.stringify(params), v]);
      return v;
    });
    this.#running(id)?.update(params, version);
    const view = await this.get(projectId, id);
    return { ...view, version, parameters: params };
  }

  /** Counts a finished task's stored tracks with `input` (default: its current rules). */
  async recount(projectId: string, id: string, input: unknown | undefined): Promise<Record<string, unknown>> {
    const started = performance.now();
    const task = await this.#task(projectId, id);
    if (!(TERMINAL_STATES as readonly string[]).includes(task.status)) {
      throw errors.analyticsUnavailable(
        id,
        `the task is ${task.status}; a recount reads a finished task's stream (GET .../analytics has the totals so far)`,
      );
    }
    const [row] = await this.s.db.query(sql.get, [id]);
    let params: AnalyticsParameters;
    if (input !== undefined) params = parseAnalytics(input, 'parameters', await this.#labels(task.request));
    else if (row) params = row.parameters as AnalyticsParameters;
    else throw errors.analyticsUnavailable(id, 'the task has no analytics step; pass parameters to count it');
    const width = Number(row?.frame_width ?? 0),
      height = Number(row?.frame_height ?? 0);
    if (params.units === 'relative' && !(width > 0 && height > 0)) {
      throw errors.invalidParam(
        'parameters.units',
        'The task recorded no frame size (it had no analytics step); units "relative" cannot be placed, use "pixels"',
      );
    }
    const engine = new AnalyticsEngine(params, { idPrefix: `${id}.ae_` });
    let events = 0;
    const { frames, source } = await forEachStoredFrame(this.s.db, this.archive, id, width, height, (f) => {
      events += engine.process(f).events.length;
    });
    events += engine.finish().length;
    return {
      object: 'video.analytics.recount',
      task_id: id,
      parameters: params,
      frames,
      events,
      totals: engine.summary(),
      recount_ms: Math.round(performance.now() - started),
      source,
    };
  }

  /**
   * Where the tracks' anchors were over the task so far (any state): a PNG the size of the source frame (up to
   * `width`). The frame size is the one the analytics step recorded, else the smallest frame holding every
   * box; a task with neither (no tracked box yet, no analytics step) is a 409.
   */
  async heatmap(projectId: string, id: string, q: HeatmapQuery): Promise<Heatmap> {
    const task = await this.#task(projectId, id);
    if (q.from_ms !== undefined && q.to_ms !== undefined && q.to_ms <= q.from_ms) {
      throw errors.invalidParam('to_ms', `Expected to_ms after from_ms (${q.from_ms}) but received ${q.to_ms}`);
    }
    const classes = q.classes ? new Set(q.classes) : null;
    if (q.classes) {
      // The detector's labels when the task's steps still plan (a model removed since: no check).
      const labels = await this.#labels(task.request).catch(() => [] as readonly string[]);
      const unknown = labels.length ? q.classes.find((c) => !labels.includes(c)) : undefined;
      if (unknown !== undefined) throw errors.unknownClass('classes', unknown, labels);
    }
    const [row] = await this.s.db.query(sql.get, [id]);
    const known = this.#running(id)?.frameSize ?? sizeOf(row?.frame_width, row?.frame_height);
    const anchor = ANCHORS.indexOf(q.anchor ?? 'bottom_center');
    const from = q.from_ms ?? -Infinity,
      to = q.to_ms ?? Infinity;
    const at = new Float64Array(2);
    // With the frame size known the points go straight onto the grid; else they wait for the boxes' extent.
    let grid = known ? new HeatmapGrid(...sizeArgs(known, q.width)) : null;
    const waiting: number[] = [];
    let right = 0,
      bottom = 0,
      frames = 0;
    await forEachStoredFrame(this.s.db, this.archive, id, known?.width ?? 0, known?.height ?? 0, (f) => {
      for (const t of f.tracks) {
        right = Math.max(right, t.box[2]);
        bottom = Math.max(bottom, t.box[3]);
      }
      if (f.t_ms < from || f.t_ms >= to) return;
      frames++;
      for (const t of f.tracks) {
        if (classes && !classes.has(t.class)) continue;
        anchorOf(anchor, t.box[0], t.box[1], t.box[2], t.box[3], at, 0);
        if (grid) grid.add(at[0]!, at[1]!);
        else waiting.push(at[0]!, at[1]!);
      }
    });
    if (!grid) {
      if (!(right > 0 && bottom > 0))
        throw errors.analyticsUnavailable(
          id,
          `no tracked box yet (the task is ${task.status}) and no recorded frame size: no heatmap to draw`,
        );
      grid = new HeatmapGrid(...sizeArgs({ width: Math.ceil(right), height: Math.ceil(bottom) }, q.width));
      for (let i = 0; i < waiting.length; i += 2) grid.add(waiting[i]!, waiting[i + 1]!);
    }
    return { png: await grid.png(), width: grid.width, height: grid.height, points: grid.points, frames };
  }
}

function sizeArgs(
  source: { width: number; height: number },
  maxWidth = HEATMAP_DEFAULT_WIDTH,
): [number, number, number] {
  const { width, height } = heatmapSize(source.width, source.height, maxWidth);
  return [width, height, source.width];
}
