// The analytics endpoints' use cases (analytics.routes.ts): totals so far, a rule change on a running task,
// a recount of a finished task from its archived chunks (no decoding), and the analytics row a new task
// starts with. Project-scoped like every video call: another project's task id is a 404.
import { errors } from '../../../errors.js';
import type { Services } from '../../../services.js';
import type { VideoTaskRequest } from '../../worker/provider.js';
import type { StreamArchive } from '../../stream/stream-archive.js';
import { TERMINAL_STATES, type TaskState } from '../../schemas.js';
import { checkSteps } from '../plan.js';
import { liveWorkerStep } from '../worker-steps.js';
import { sql } from './analytics.sql.js';
import { AnalyticsEngine, type AnalyticsSummary } from './engine.js';
import { parseAnalytics } from './rules.js';
import type { AnalyticsParameters } from './rules.schema.js';
import { analyticsFrame, analyticsStep, TaskAnalytics } from './task-analytics.js';

/** Archive rows read per query during a recount. */
const READ_ROWS = 2048;

export interface AnalyticsView {
  object: 'video.analytics';
  task_id: string;
  status: TaskState;
  version: number;
  parameters: AnalyticsParameters;
  /** null until the worker saved its first totals. */
  totals: AnalyticsSummary | null;
}

export class AnalyticsService {
  constructor(private readonly s: Services, private readonly archive: StreamArchive) {}

  async #task(projectId: string, id: string): Promise<{ status: TaskState; request: VideoTaskRequest }> {
    const [row] = await this.s.db.query(sql.task, [id, projectId]);
    if (!row) throw errors.notFound('video task', id);
    return { status: row.status as TaskState, request: (row.job as { request: VideoTaskRequest }).request };
  }

  /** Class names the analytics step may name: the labels of the detect step before it. */
  async #labels(request: VideoTaskRequest): Promise<readonly string[]> {
    const plan = await checkSteps(request, this.s.taskModels);
    const at = plan.findIndex((p) => p.kind === 'analytics');
    return plan.slice(0, at < 0 ? plan.length : at).findLast((p) => p.labels !== undefined)?.labels ?? [];
  }

  /** The task's analytics run when it runs in this process. */
  #running(id: string): TaskAnalytics | undefined {
    const run = liveWorkerStep(id, 'analytics');
    return run instanceof TaskAnalytics ? run : undefined;
  }

  /** Totals so far: from the worker when the task runs in this process, else as last saved. */
  async get(projectId: string, id: string): Promise<AnalyticsView> {
    const task = await this.#task(projectId, id);
    const step = analyticsStep(task.request);
    if (!step) throw errors.analyticsUnavailable(id, 'the task has no analytics step');
    const running = this.#running(id);
    if (running) {
      return { object: 'video.analytics', task_id: id, status: task.status, version: running.engine.version, parameters: running.engine.parameters, totals: running.engine.summary() };
    }
    const [row] = await this.s.db.query(sql.get, [id]);
    return {
      object: 'video.analytics', task_id: id, status: task.status, version: row ? Number(row.version) : 1,
      parameters: row ? (row.parameters as AnalyticsParameters) : step, totals: (row?.summary as AnalyticsSummary | null) ?? null,
    };
  }

  /** New rules for a pending or running task: applied from its next sampled frame, version + 1. */
  async put(projectId: string, id: string, input: unknown): Promise<AnalyticsView> {
    const task = await this.#task(projectId, id);
    const step = analyticsStep(task.request);
    if (!step) throw errors.analyticsUnavailable(id, 'the task has no analytics step');
    if ((TERMINAL_STATES as readonly string[]).includes(task.status) || task.status === 'cancelling') {
      throw errors.analyticsUnavailable(id, `the task is ${task.status}; rules change only on a pending or running task (POST .../analytics/recount counts a finished one with new rules)`);
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

  /** Counts a finished task's archived tracks with `input` (default: its current rules). */
  async recount(projectId: string, id: string, input: unknown | undefined): Promise<Record<string, unknown>> {
    const started = performance.now();
    const task = await this.#task(projectId, id);
    if (!(TERMINAL_STATES as readonly string[]).includes(task.status)) {
      throw errors.analyticsUnavailable(id, `the task is ${task.status}; a recount reads a finished task's stream (GET .../analytics has the totals so far)`);
    }
    const [row] = await this.s.db.query(sql.get, [id]);
    let params: AnalyticsParameters;
    if (input !== undefined) params = parseAnalytics(input, 'parameters', await this.#labels(task.request));
    else if (row) params = row.parameters as AnalyticsParameters;
    else throw errors.analyticsUnavailable(id, 'the task has no analytics step; pass parameters to count it');
    const width = Number(row?.frame_width ?? 0), height = Number(row?.frame_height ?? 0);
    if (params.units === 'relative' && !(width > 0 && height > 0)) {
      throw errors.invalidParam('parameters.units', 'The task recorded no frame size (it had no analytics step); units "relative" cannot be placed, use "pixels"');
    }
    const engine = new AnalyticsEngine(params, { idPrefix: `${id}.ae_` });
    let frames = 0, events = 0, offset = 0;
    for (;;) {
      const { bytes } = await this.archive.read(id, offset, READ_ROWS);
      if (bytes.length === 0) break;
      offset += bytes.length;
      for (const ev of bytes.toString('utf8').split('\n\n')) {
        // Frame chunks only: the terminal chunk (finish_reason set) has no targets of its own.
        if (!ev.startsWith('data: {') || !ev.includes('"finish_reason":null')) continue;
        const chunk = JSON.parse(ev.slice(6));
        events += engine.process(analyticsFrame(chunk, width, height)).events.length;
        frames++;
      }
    }
    events += engine.finish().length;
    return {
      object: 'video.analytics.recount', task_id: id, parameters: params, frames, events,
      totals: engine.summary(), recount_ms: Math.round(performance.now() - started),
    };
  }
}
