// Video tasks: routes over one TasksService, the reaper and the webhook dispatcher (every process), and the
// in-process worker unless disabled.
// Providers come from ./providers.js (built from SIGHTFLOW_PROVIDERS) through a dynamic import, so the task
// machinery builds and runs before that file exists: tasks then fail with a clear `no_provider` error.
import type { Module, ModulePart } from '../module.js';
import { videoMigrations } from './video.migrations.sql.js';
import type { Services } from '../services.js';
import type { VideoProvider } from './provider.js';
import { StreamArchive } from './stream-archive.js';
import { hubFor } from './stream-hub.js';
import { TaskStore } from './task-store.js';
import { Subscriptions } from './stream.js';
import { FinishedArchiveCache } from './archive-cache.js';
import { fanoutFor } from './stream-fanout.js';
import { Reaper } from './reaper.js';
import { VideoWorker, type ProviderSource } from './worker.js';
import { videoRoutes } from './video.routes.js';
import { TasksService } from './tasks.service.js';
import { WebhookDispatcher } from './webhooks.js';
import type { VideoSettings } from '../config/index.js';

export interface VideoModuleOptions {
  worker: boolean;
  /** Tests inject their providers; default: createProviders(s) of ./providers.js. */
  providers?: ProviderSource;
  settings?: Partial<VideoSettings>;
}

type ProvidersModule = { createProviders(s: Services): { forModel(model: string | undefined): VideoProvider[] } };

/**
 * The provider lists of the configuration (SIGHTFLOW_PROVIDERS, parsed at start). `load()` at start builds them
 * before the first task; a missing providers module only logs (tasks then fail with no_provider).
 */
export function defaultProviders(s: Services): ProviderSource & { load(): Promise<void> } {
  type Lists = ReturnType<ProvidersModule['createProviders']>;
  let loaded: Promise<Lists | null> | null = null;
  const load = () => (loaded ??= (async () => {
    const spec = './providers.js';
    let mod: ProvidersModule;
    try {
      mod = (await import(spec)) as ProvidersModule;
    } catch (e) {
      s.log.error({ err: e }, 'video providers unavailable (src/video/providers.ts); video tasks will fail with no_provider');
      return null;
    }
    return mod.createProviders(s);
  })());
  const source = async (model: string | undefined) => {
    const lists = await load().catch(() => null);
    return lists ? lists.forModel(model) : [];
  };
  return Object.assign(source, { load: async () => { await load(); } });
}

/** Video's name and tables (versions 100-199). */
export const videoPart: ModulePart = { name: 'video', migrations: videoMigrations };

export interface VideoModule extends Module {
  worker: VideoWorker | null;
  tasks: TasksService;
}

export function videoModule(s: Services, opts: VideoModuleOptions): VideoModule {
  const settings = { ...s.config.video, ...opts.settings };
  const hub = hubFor(s);
  const archive = new StreamArchive(s, hub);
  const store = new TaskStore(s, archive, hub);
  const subs = new Subscriptions();
  const fanout = fanoutFor(s, { bufferBytes: settings.streamBufferBytes, stallMs: settings.streamStallMs, pollMs: settings.streamPollMs });
  const reaper = new Reaper(s, archive, settings.reaperMs);
  const fallback = opts.worker && !opts.providers ? defaultProviders(s) : null;
  const worker = opts.worker ? new VideoWorker(s, { providers: opts.providers ?? fallback!, settings }) : null;
  const tasks = new TasksService(s, store);
  const webhooks = new WebhookDispatcher(s, { pollMs: settings.webhookPollMs, retryMs: settings.webhookRetryMs });
  return {
    ...videoPart,
    worker,
    tasks,
    routes: videoRoutes(s, { tasks, store, archive, subs, cache: new FinishedArchiveCache(), fanout }),
    async start() {
      await fallback?.load();
      reaper.start();
      webhooks.start();
      worker?.start();
    },
    async stop() {
      reaper.stop();
      await worker?.stop();
      await webhooks.stop();
      subs.closeAll();
      fanout.close();
      await hub.close();
    },
  };
}
