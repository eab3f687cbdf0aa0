// Video tasks: routes over one TasksService, the reaper and the webhook dispatcher (every process), and the
// in-process worker unless disabled. The rooms, lowest first (CONTRIBUTING.md, "The video part's rooms"): the
// task contract at the root (task-contract.ts, tasks.sql.ts); source/ (opening and decoding a video) and
// stream/ (archive and delivery); pipeline/ (the step contract and the steps that need no room of their own);
// analytics/ and moments/ (rich steps with their own tables and API); steps/ (the step list, planning, the
// runners); tasks/ (the API side) and worker/ (queue, worker, providers); this shell. Rooms with an API of
// their own are built beside this module from its ports (VideoPorts).
import type { Module, ModulePart } from '../base/module.js';
import { videoMigrations } from './video.migrations.sql.js';
import type { Services } from '../services/services.js';
import { StreamArchive } from './stream/stream-archive.js';
import { hubFor } from './stream/stream-hub.js';
import { TaskStore } from './tasks/task-store.js';
import { Subscriptions } from './stream/stream.js';
import { FinishedArchiveCache } from './stream/archive-cache.js';
import { Reaper } from './tasks/reaper.js';
import { TaskQueue } from './worker/queue.js';
import { VideoWorker, type ProviderSource, type WorkerRooms } from './worker/worker.js';
import { createProviders } from './worker/provider-lists.js';
import { fanoutFor } from './stream/stream-fanout.js';
import { videoRoutes } from './video.routes.js';
import { TasksService } from './tasks/tasks.service.js';
import { WebhookDispatcher } from './tasks/webhooks.js';
import type { VideoSettings } from '../config/index.js';
import { watchVideoGauges } from './video-metrics.js';
import type { CollectionsPort } from '../services/collections-port.js';
import type { LiveSteps } from './pipeline/worker-step.js';
import type { PlannedStep, StepServices } from './pipeline/frame-step.js';
import type { VideoTaskRequest } from './task-contract.js';
import { checkSteps } from './steps/plan.js';
import { MqttPublisher } from './mqtt/mqtt-publisher.js';

export interface VideoModuleOptions {
  worker: boolean;
  /** Tests inject their providers; default: the configuration's lists (createProviders, worker/provider-lists.ts). */
  providers?: ProviderSource;
  settings?: Partial<VideoSettings>;
  /** Vector collections as the index step writes them (the vectors part's port; absent where it does not run). */
  collections?: CollectionsPort;
}

/**
 * The provider lists of the configuration (SIGHTFLOW_PROVIDERS, parsed at start), built by `load()` at start
 * before the first task.
 */
export function defaultProviders(
  s: Pick<Services, 'config' | 'taskModels'> & StepServices,
): ProviderSource & { load(): Promise<void> } {
  let lists: ReturnType<typeof createProviders> | null = null;
  const load = () => (lists ??= createProviders(s));
  const source = async (model: string | undefined) => load().forModel(model);
  return Object.assign(source, {
    load: async () => {
      load();
    },
  });
}

/** The task machinery one video module (or a worker beside it) runs on: the queue, the archive and its hub. */
export function videoRooms(s: Services): WorkerRooms {
  const hub = hubFor(s);
  return { hub, archive: new StreamArchive(s, hub), queue: new TaskQueue(s) };
}

/** Video's name and tables (versions 100-199). */
export const videoPart: ModulePart = { name: 'video', migrations: videoMigrations };

/** What the video rooms with an API of their own (analytics/) are handed: the archive, the running tasks' step
 * runs and the step planner. */
export interface VideoPorts {
  archive: StreamArchive;
  live: LiveSteps;
  planSteps(request: VideoTaskRequest): Promise<readonly PlannedStep[]>;
}

/** A process without a worker runs no task: no step run is live here. */
const NO_LIVE_STEPS: LiveSteps = { get: () => undefined };

export interface VideoModule extends Module {
  worker: VideoWorker | null;
  tasks: TasksService;
  ports: VideoPorts;
}

export function videoModule(s: Services, opts: VideoModuleOptions): VideoModule {
  const settings = { ...s.config.video, ...opts.settings };
  const rooms = videoRooms(s);
  const { hub, archive } = rooms;
  const store = new TaskStore(s, archive, hub);
  const subs = new Subscriptions();
  const fanout = fanoutFor(s, {
    bufferBytes: settings.streamBufferBytes,
    stallMs: settings.streamStallMs,
    pollMs: settings.streamPollMs,
  });
  const reaper = new Reaper(s, archive, settings.reaperMs, hub);
  const steps: StepServices = { db: s.db, log: s.log, collections: opts.collections };
  const fallback =
    opts.worker && !opts.providers ? defaultProviders({ config: s.config, taskModels: s.taskModels, ...steps }) : null;
  // The worker publishes the tasks that ask for MQTT (docs/mqtt.md); a process without one never connects.
  const mqtt = opts.worker && s.config.mqtt ? new MqttPublisher(s.config.mqtt, s.log) : null;
  const worker = opts.worker
    ? new VideoWorker(s, { ...rooms, providers: opts.providers ?? fallback!, settings, mqtt })
    : null;
  const tasks = new TasksService(s, store, steps);
  const webhooks = new WebhookDispatcher(s, { pollMs: settings.webhookPollMs, retryMs: settings.webhookRetryMs });
  let unwatch = () => {};
  return {
    ...videoPart,
    worker,
    tasks,
    ports: { archive, live: worker?.live ?? NO_LIVE_STEPS, planSteps: (request) => checkSteps(request, s.taskModels) },
    routes: videoRoutes(s, { tasks, store, archive, subs, cache: new FinishedArchiveCache(), fanout }),
    async start() {
      await fallback?.load();
      reaper.start();
      webhooks.start();
      unwatch = watchVideoGauges(
        s,
        () => worker?.activeTasks ?? 0,
        () => subs.count,
      );
      mqtt?.start();
      worker?.start();
    },
    async stop() {
      unwatch();
      reaper.stop();
      await worker?.stop();
      await mqtt?.close();
      await webhooks.stop();
      subs.closeAll();
      fanout.close();
      await hub.close();
    },
  };
}
