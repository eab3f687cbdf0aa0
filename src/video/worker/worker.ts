// Video workers: up to `concurrency` tasks at a time, each claimed from the queue, run through the ordered
// provider list of its model, its frames appended to the archive one transaction per chunk. Failover: before
// the first frame a provider failure moves on to the next provider (at most 2 retries, and nothing was
// archived, so nothing is duplicated); after it the task fails with a terminal `error` chunk. A bad input
// (ApiError) fails at once. Cancel is honoured at every chunk boundary and aborts the provider's signal.
// A resumable task's chunks carry its checkpoint (TaskCheckpoint, stored by the same fenced append: a camera's
// with every chunk, a file's with every few, CheckpointCadence), and a task claimed with one continues where
// its dead worker left it: the archive is replayed into the results fold and the worker steps (analytics
// totals carry over), chunk ids and counters go on, and the provider continues from the live edge (a camera)
// or right after the checkpoint's frame (a file; the frames archived after it are processed again, not
// archived again: CatchUp) (docs/video.md, "When a worker dies").
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { isApiError, taskErrors } from '../../base/errors.js';
import type { Services } from '../../services/services.js';
import {
  CHECKPOINT_VERSION,
  ProviderError,
  type FrameOutput,
  type ProviderResult,
  type StreamInfo,
  type TaskCheckpoint,
  type VideoProvider,
} from '../task-contract.js';
import type { TaskQueue, ClaimedTask } from './queue.js';
import { KEEP_CHECKPOINT, type StreamArchive, type Finish } from '../stream/stream-archive.js';
import { CatchUp, CheckpointCadence } from './checkpoint-cadence.js';
import type { StreamHub } from '../stream/stream-hub.js';
import { buildResults, recordUsage, TrackFold } from './results.js';
import type { VideoSettings } from '../../config/index.js';
import { EMPTY_STREAM_INFO } from '../stream/chunks.js';
import { countTaskResume, observeChunk, observeTaskEnd } from '../../metrics/video.js';
import { spanTraceparent, spanUnder, traceIdOf, type SpanIds } from '../../tracing/traceparent.js';
import { recordSpan, spansOn } from '../../tracing/spans.js';
import { LiveStepRuns, WorkerSteps } from '../steps/worker-steps.js';
import type { MqttPublisher } from '../mqtt/mqtt-publisher.js';
import { TaskMqtt } from '../mqtt/task-mqtt.js';

/** The ordered providers for a request's `model` hint. */
export type ProviderSource = (model: string | undefined) => VideoProvider[] | Promise<VideoProvider[]>;

/** Before the first chunk a failing provider hands the task to the next: up to 2 retries. */
export const MAX_PROVIDER_TRIES = 3;
/** How long a cancelled or shut-down provider gets to return before its slot is freed anyway. */
const ABORT_GRACE_MS = 10_000;
/** Errors that say what this node lacks, not what is wrong with the task: another provider may have it. */
const NODE_LACKS = new Set(['video_unavailable', 'gpu_unavailable']);

export class NoProviderError extends Error {}

/** The video module's task machinery a worker runs on: the queue it claims from, the archive it appends to
 * and the hub that wakes it (videoRooms() in video.module.ts builds them once per module). */
export interface WorkerRooms {
  queue: TaskQueue;
  archive: StreamArchive;
  hub: StreamHub;
}

export interface WorkerOptions extends WorkerRooms {
  providers: ProviderSource;
  concurrency?: number;
  settings?: Partial<VideoSettings>;
  /** This process's MQTT connection, where tasks that ask for it publish (docs/mqtt.md); null: none configured. */
  mqtt?: MqttPublisher | null;
}

export class VideoWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** The worker-side step runs of the tasks this worker runs (the analytics API reads a running task's totals there). */
  readonly live = new LiveStepRuns();
  private readonly queue: TaskQueue;
  private readonly archive: StreamArchive;
  private readonly hub: StreamHub;
  private readonly settings: VideoSettings;
  private readonly concurrency: number;
  private readonly active = new Map<string, TaskRun>();
  private running = false;
  private loopDone: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private offNew: (() => void) | null = null;

  constructor(
    private readonly s: Services,
    private readonly opts: WorkerOptions,
  ) {
    this.hub = opts.hub;
    this.queue = opts.queue;
    this.archive = opts.archive;
    this.settings = { ...s.config.video, ...opts.settings };
    this.concurrency = Math.max(1, opts.concurrency ?? s.config.workerConcurrency);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.offNew = this.hub.onNewTask(() => this.poke());
    this.loopDone = this.loop();
  }

  /** Tasks running here now. */
  get activeTasks(): number {
    return this.active.size;
  }

  /** Stops claiming; running tasks are ended (back to pending before their first chunk, live ones with a
   * checkpoint handed on, else failed). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.offNew?.();
    this.poke();
    const runs = [...this.active.values()];
    for (const run of runs) run.shutdown();
    await this.loopDone;
    await Promise.all(runs.map((r) => r.done));
    // Live tasks handed on (TaskRun.shutdownEnd) are taken up by the other workers at once.
    if (runs.length > 0) await this.hub.announceNewTask().catch(() => {});
  }

  private poke(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (this.active.size >= this.concurrency) {
        await this.sleep(this.settings.pollMs);
        continue;
      }
      let task: ClaimedTask | null = null;
      try {
        task = await this.queue.claim(this.owner, this.settings.leaseMs);
      } catch (e) {
        if (this.running) this.s.log.warn({ err: e }, 'video task claim failed');
      }
      if (!this.running) {
        // Claimed while stopping: give it straight back.
        if (task) await this.archive.releaseOwned(task.id, this.owner).catch(() => {});
        break;
      }
      if (!task) {
        await this.sleep(this.settings.pollMs);
        continue;
      }
      const mqtt = () =>
        TaskMqtt.open(this.opts.mqtt ?? null, {
          taskId: task!.id,
          request: task!.job.request,
          hub: this.hub,
          live: this.live,
          version: this.s.version,
        });
      const run = new TaskRun(
        this.s,
        task,
        this.owner,
        this.archive,
        this.queue,
        this.settings,
        this.opts.providers,
        this.live,
        mqtt,
      );
      this.active.set(task.id, run);
      void run.done.finally(() => {
        this.active.delete(task!.id);
        this.poke();
      });
    }
  }
}

/** One claimed task from claim to its terminal state (or until the lease is lost). */
class TaskRun {
  readonly done: Promise<void>;
  private readonly controller = new AbortController();
  /** Appends are serialised: frames, heartbeat comments and the terminal chunk never interleave. */
  private chain: Promise<unknown> = Promise.resolve();
  private emitted = 0;
  /** The task holds a checkpoint: another worker can continue it. */
  private checkpointed = false;
  /** When this file task's chunks store a checkpoint. */
  private cadence: CheckpointCadence;
  /** A continued file task's frames archived after its checkpoint, to be processed again (null: none). */
  private catchUp: CatchUp | null = null;
  private lastInfo: StreamInfo = EMPTY_STREAM_INFO;
  private lastAppendAt = Date.now();
  private readonly startedAt = performance.now();
  private readonly fold = new TrackFold();
  /** Set once the task is terminal here or was taken away: emits return false, results are ignored. */
  private over = false;
  private stopping = false;
  /** The request's steps with worker hooks (analytics): every frame goes through them before it is archived. */
  private steps: WorkerSteps | null = null;
  /** Where the task's analytics are published besides its stream (docs/mqtt.md). */
  private mqtt: TaskMqtt | null = null;
  /** Frames the provider already ran through the worker's steps (ProviderContext.complete). */
  private readonly completed = new WeakSet<FrameOutput>();
  /**
   * This run's span while spans are exported: a child of the span that queued the task (its stored
   * traceparent names it), and the parent of the providers' calls.
   */
  private readonly span: SpanIds | null;
  /** How the run ended here, for its span: the terminal status, or lost (lease) / released (shutdown). */
  private outcome: string = 'released';
  private failure: string | undefined;

  constructor(
    private readonly s: Services,
    private readonly task: ClaimedTask,
    private readonly owner: string,
    private readonly archive: StreamArchive,
    private readonly queue: TaskQueue,
    private readonly settings: VideoSettings,
    private readonly providers: ProviderSource,
    private readonly live: LiveStepRuns,
    /** Opens the task's MQTT publishing (null: it did not ask, or this process has no broker), after its steps. */
    private readonly openMqtt: () => TaskMqtt | null,
  ) {
    this.span = spansOn ? spanUnder(task.job.traceparent) : null;
    // A continued task: its frames so far count (usage bills each frame once, at the end, by whoever ends it).
    this.emitted = task.chunkCount;
    this.checkpointed = task.chunkCount > 0 && task.checkpoint !== null;
    this.cadence = new CheckpointCadence(settings.checkpointChunks, settings.checkpointMs);
    if (task.lastInfo) this.lastInfo = { ...EMPTY_STREAM_INFO, ...task.lastInfo };
    this.done = this.run().catch((e) => {
      this.s.log.error({ err: e, taskId: task.id, trace_id: traceIdOf(task.job.traceparent) }, 'video task run failed');
    });
  }

  shutdown(): void {
    this.stopping = true;
    this.controller.abort(new Error('worker shutting down'));
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => {});
    return p;
  }

  private usage() {
    return {
      processed_frames: this.emitted,
      processing_time_ms: Math.round(performance.now() - this.startedAt),
      decoded_frames: this.lastInfo.decoded_frames,
      dropped_frames: this.lastInfo.dropped_frames,
    };
  }

  private async finish(f: Finish): Promise<void> {
    await this.serial(async () => {
      if (this.over) return;
      this.over = true;
      const status = await this.archive.finishOwned(this.task.id, this.owner, f);
      this.outcome = status ? f.status : 'lost';
      if (f.status === 'failed') this.failure = f.error?.message ?? 'failed';
      if (status) observeTaskEnd(f.status, f.usage, this.lastInfo);
      if (status)
        await recordUsage(this.s, this.task, f.usage.processed_frames, f.usage.processing_time_ms).catch(() => {});
    });
    this.controller.abort(new Error('task finished'));
  }

  private async cancelNow(): Promise<void> {
    await this.finish({ status: 'cancelled', reason: 'cancelled', usage: this.usage() });
  }

  private lost(): void {
    this.over = true;
    this.outcome = 'lost';
    this.controller.abort(new Error('lease lost'));
  }

  private complete = (frame: FrameOutput): FrameOutput => {
    if (this.catchUp?.pending) return this.again(frame);
    if (!this.steps || this.steps.empty || this.over) return frame;
    const out = this.steps.frame(frame);
    this.completed.add(out);
    return out;
  };

  /** A frame processed again after a takeover: its archived output stands (CatchUp). */
  private again(frame: FrameOutput): FrameOutput {
    const c = this.catchUp!;
    const out = c.take(frame);
    if (c.pending === 0 && c.differing > 0)
      this.s.log.warn(
        { taskId: this.task.id, frames: c.differing },
        'frames processed again after a takeover gave other targets than the archived ones; the archived stand',
      );
    return out;
  }

  /** Whether the next frame's chunk stores a checkpoint (ProviderContext.checkpointDue); never one processed again. */
  private checkpointDue = (): boolean => !this.catchUp?.pending && this.cadence.due();

  private emit = async (frame: FrameOutput): Promise<boolean> => {
    if (this.over || this.controller.signal.aborted) return false;
    // A frame processed again after a takeover is archived already (its output came from the archive).
    if (this.catchUp?.gave(frame)) return true;
    if (this.catchUp?.pending) {
      this.again(frame);
      return true;
    }
    const outcome = await this.serial(async () => {
      if (this.over) return 'lost' as const;
      const out = this.steps && !this.completed.has(frame) ? this.steps.frame(frame) : frame;
      const checkpoint = this.checkpoint(out);
      const o = await this.archive.appendFrame(this.task.id, this.owner, out, this.settings.leaseMs, checkpoint);
      if (o === 'appended') {
        if (checkpoint !== KEEP_CHECKPOINT) this.checkpointed = checkpoint !== null;
        this.cadence.archived(checkpoint !== KEEP_CHECKPOINT && checkpoint !== null);
        observeChunk(frame.stream_info, this.lastInfo);
        this.emitted++;
        this.lastInfo = frame.stream_info;
        this.lastAppendAt = Date.now();
        this.fold.add(frame);
        // Before anything else is appended to the task: the publisher reads where this chunk starts.
        this.mqtt?.archived(out);
        await this.steps?.archived(out);
      }
      return o;
    });
    if (outcome === 'cancelling') {
      await this.cancelNow();
      return false;
    }
    if (outcome === 'lost') {
      this.lost();
      return false;
    }
    return true;
  };

  /**
   * The checkpoint stored with a frame's chunk: for a frame of a provider that can continue it (a live frame, or
   * a file's frame with the decoder's cursor and the pipeline's state), else none; a file's frame that could
   * carry one but none was due keeps the task's.
   */
  private checkpoint(out: FrameOutput): TaskCheckpoint | typeof KEEP_CHECKPOINT | null {
    const info = out.stream_info;
    const r = out.resumable;
    const live = info.live === true;
    if (r?.deferred && !live) return KEEP_CHECKPOINT;
    if (!r || (!live && (r.decoder === undefined || r.pipeline === undefined))) return null;
    let next = r.next_track_id;
    for (const r of out.delta.results) for (const t of r.targets) next = Math.max(next, t.track_id + 1);
    return {
      v: CHECKPOINT_VERSION,
      frames: this.emitted + 1,
      frame_index: info.frame_index,
      stream_time_ms: info.stream_time_ms ?? 0,
      received_at_ms: info.received_at_ms ?? Date.now(),
      decoded_frames: info.decoded_frames,
      dropped_frames: info.dropped_frames,
      reconnects: info.reconnects ?? 0,
      elapsed_ms: info.elapsed_ms,
      next_track_id: next,
      live,
      ...(live ? {} : { decoder: r.decoder, pipeline: r.pipeline, ...(r.source ? { source: r.source } : {}) }),
    };
  }

  /**
   * A task another worker began: its archived frames go through the results fold and the worker steps
   * before the first new one. False when it cannot continue (no checkpoint this version reads): it fails.
   */
  private async resume(): Promise<boolean> {
    if (this.task.chunkCount === 0) return true;
    const cp = this.task.checkpoint;
    // A file's checkpoint is of a chunk at most a few before the last: the frames after it are processed again.
    // One of a later chunk than the archive holds describes no state of it.
    const behind = !cp ? -1 : cp.live ? 0 : this.task.chunkCount - cp.frames;
    if (!cp || behind < 0) {
      await this.finish({
        status: 'failed',
        reason: 'error',
        usage: this.usage(),
        error: taskErrors.workerLostMidStream(this.task.chunkCount),
      });
      return false;
    }
    const catchUp = behind > 0 ? new CatchUp(cp.frames) : null;
    let k = 0;
    await this.archive.forEachFrame(this.task.id, async (f) => {
      this.fold.add(f as FrameOutput);
      catchUp?.add(f);
      await this.steps?.replay(f, ++k === this.task.chunkCount);
    });
    this.catchUp = catchUp;
    this.cadence = new CheckpointCadence(this.settings.checkpointChunks, this.settings.checkpointMs, behind);
    countTaskResume('continued');
    this.s.log.info(
      { taskId: this.task.id, resumes: this.task.resumes, frames: this.task.chunkCount, again: behind },
      'video task continues after its worker died',
    );
    return true;
  }

  private async beat(): Promise<void> {
    if (this.over) return;
    const hb = await this.queue.heartbeat(this.task.id, this.owner, this.settings.leaseMs);
    if (!hb) return this.lost();
    if (hb.status === 'cancelling') return this.cancelNow();
    await this.steps?.refresh();
    if (Date.now() - this.lastAppendAt >= this.settings.sseHeartbeatMs) {
      await this.serial(async () => {
        if (this.over) return;
        if (await this.archive.appendHeartbeat(this.task.id, this.owner)) this.lastAppendAt = Date.now();
      });
    }
  }

  private async run(): Promise<void> {
    let beating = false;
    const timer = setInterval(() => {
      if (beating) return;
      beating = true;
      this.beat()
        .catch((e) => this.s.log.warn({ err: e, taskId: this.task.id }, 'video task heartbeat failed'))
        .finally(() => {
          beating = false;
        });
    }, this.settings.heartbeatMs);
    try {
      this.steps = await WorkerSteps.open(this.s, this.task.id, this.task.job.request, this.live);
      if (!(await this.resume())) return;
      this.mqtt = this.openMqtt();
      await this.runProviders();
    } catch (e) {
      // A bad step never gets here (checked at submit); a database failure of a worker step fails the task.
      if (!this.over)
        await this.finish({
          status: 'failed',
          reason: 'error',
          usage: this.usage(),
          error: taskErrors.providerError('worker steps', this.emitted, (e as Error).message),
        });
    } finally {
      clearInterval(timer);
      await this.chain;
      this.archive.forget(this.task.id);
      this.steps?.close();
      this.mqtt?.close();
      if (this.span) this.recordSpan();
    }
  }

  private recordSpan(): void {
    const t = this.task;
    recordSpan({
      name: 'video task',
      kind: 'consumer',
      ...this.span!,
      startMs: this.startedAt,
      endMs: performance.now(),
      attributes: {
        'sightflow.task_id': t.id,
        'sightflow.project_id': t.projectId,
        'sightflow.task.model': t.model,
        'sightflow.task.attempt': t.attempts,
        'sightflow.task.status': this.outcome,
        'sightflow.task.frames': this.emitted,
      },
      error: this.outcome === 'failed' ? this.failure : undefined,
    });
  }

  private async runProviders(): Promise<void> {
    const { request, source } = this.task.job;
    const src = source.blob_key ? { path: this.s.blobs.pathOf(source.blob_key) } : { url: source.url };
    const req = source.blob_key ? { ...request, input: [{ ...request.input[0]!, url: src.path }] } : request;
    let providers: VideoProvider[];
    try {
      providers = await this.providers(request.model);
    } catch (e) {
      providers = [];
      this.s.log.error({ err: e }, 'video providers could not be created');
    }
    if (providers.length === 0) {
      return this.finish({
        status: 'failed',
        reason: 'error',
        usage: this.usage(),
        error: taskErrors.noProvider(request.model ?? this.task.model),
      });
    }
    // A task that continues never starts again from its first frame on a provider that cannot continue it.
    if (this.task.chunkCount > 0) {
      providers = providers.filter((p) => p.resumes === true);
      if (providers.length === 0) {
        return this.finish({
          status: 'failed',
          reason: 'error',
          usage: this.usage(),
          error: taskErrors.workerLostMidStream(this.task.chunkCount),
        });
      }
    }
    const tried: string[] = [];
    // While spans are exported the providers' calls hang under this run's span.
    const traceparent = this.span ? spanTraceparent(this.span, this.span.spanId) : this.task.job.traceparent;
    const ctx = {
      taskId: this.task.id,
      projectId: this.task.projectId,
      traceparent,
      signal: this.controller.signal,
      emit: this.emit,
      complete: this.complete,
      checkpointDue: this.checkpointDue,
      handedOn: () => (this.outcome === 'lost' || this.stopping) && this.checkpointed,
      ...(this.task.checkpoint && this.task.chunkCount > 0 ? { resume: this.task.checkpoint } : {}),
    };
    const tries = providers.slice(0, MAX_PROVIDER_TRIES);
    for (const [i, provider] of tries.entries()) {
      let result: ProviderResult;
      try {
        result = await this.untilAborted(provider.run(req, src, ctx));
      } catch (e) {
        if (this.over) return;
        if (this.stopping) return this.shutdownEnd();
        const message = (e as Error)?.message ?? String(e);
        // A bad input is the same on every provider: never retried. But a node that cannot decode video (the
        // addon built without FFmpeg), or cannot start the task's model on the GPU it requires, hands the task
        // to the next provider, another node, when there is one.
        const elsewhere = isApiError(e) && NODE_LACKS.has(e.code) && i < tries.length - 1;
        if (isApiError(e) && !elsewhere) {
          return this.finish({
            status: 'failed',
            reason: 'error',
            usage: this.usage(),
            error: { code: e.code, message: e.message },
          });
        }
        if (this.emitted > 0) {
          return this.finish({
            status: 'failed',
            reason: 'error',
            usage: this.usage(),
            error:
              e instanceof ProviderError && e.code
                ? { code: e.code, message }
                : taskErrors.providerError(provider.name, this.emitted, message),
          });
        }
        tried.push(`${provider.name}: ${message}`);
        this.s.log.warn(
          {
            taskId: this.task.id,
            trace_id: traceIdOf(this.task.job.traceparent),
            provider: provider.name,
            err: e,
            status: e instanceof ProviderError ? e.status : undefined,
          },
          'video provider failed before the first chunk; failing over',
        );
        continue;
      }
      if (this.over) return;
      if (this.stopping) return this.shutdownEnd();
      // A continued file that ended before the frames archived after its checkpoint is not the file it was.
      if (this.catchUp?.pending)
        return this.finish({
          status: 'failed',
          reason: 'error',
          usage: this.usage(),
          error: taskErrors.inputEndedEarly(this.catchUp.pending),
        });
      const usage = {
        ...result.usage,
        processed_frames: this.emitted,
        processing_time_ms: Math.round(result.usage.processing_time_ms),
      };
      // A continued task's provider saw only its own frames: the fold over the whole archive summarises its tracks.
      const whole = this.task.chunkCount > 0 ? { ...result, tracks: [] } : result;
      const results: Record<string, unknown> = {
        ...buildResults(this.task.id, this.task.model, this.emitted, whole, this.fold),
      };
      const end = this.steps && !this.steps.empty ? await this.steps.finish() : undefined;
      this.mqtt?.finish(end?.chunk);
      Object.assign(results, end?.results);
      return this.finish({
        status: 'succeeded',
        reason: result.finish_reason,
        info: result.stream_info,
        usage,
        results,
        chunk: end?.chunk,
      });
    }
    if (this.over) return;
    await this.finish({
      status: 'failed',
      reason: 'error',
      usage: this.usage(),
      error: taskErrors.providersFailed(tried),
    });
  }

  /** A provider that ignores its aborted signal cannot hold the slot forever. */
  private untilAborted<T>(p: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | null = null;
      const onAbort = () => {
        timer = setTimeout(() => reject(signal.reason), ABORT_GRACE_MS);
        timer.unref();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      p.then(resolve, reject).finally(() => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      });
    });
  }

  /**
   * Shutdown: a task without chunks goes back to the queue; a live one with a checkpoint is handed on to the
   * next worker (docs/video.md, "When a worker dies"); any other one mid-stream fails.
   */
  private async shutdownEnd(): Promise<void> {
    if (this.emitted === 0) {
      const released = await this.serial(async () =>
        this.over ? 'gone' : this.archive.releaseOwned(this.task.id, this.owner),
      );
      if (released === 'cancelling') await this.cancelNow();
      else this.over = true;
      return;
    }
    const handed = await this.serial(async () =>
      this.over ? 'gone' : this.archive.handOverOwned(this.task.id, this.owner),
    );
    if (handed === 'handed' || handed === 'gone') {
      this.over = true;
      return;
    }
    if (handed === 'cancelling') return this.cancelNow();
    await this.finish({ status: 'failed', reason: 'error', usage: this.usage(), error: taskErrors.workerShutdown() });
  }
}
