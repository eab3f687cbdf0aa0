// The models a running server uses: the registry (prepared in the background at start, /readyz waits for it)
// and one runtime (its worker threads and queues). Task objects built on them (the detector, OCR, embedders)
// belong to the parts that use them; this layer knows only model ids, files and sessions.
// Models added or removed while serving (`sightflow models add` on the same data dir, the admin API, another
// node through the shared database) are picked up by re-reading <data-dir>/manifests every syncMs: a removed
// or replaced model's session is released and listeners (the parts' caches of task objects) are told.
import type { Logger } from '../base/log.js';
import { ModelCatalogue } from './model-catalogue.js';
import { type ModelChanges, ModelRegistry } from '../inference/registry.js';
import { InferenceRuntime, type RuntimeOptions } from '../inference/runtime.js';

export type { ModelChanges } from '../inference/registry.js';

export class ModelsService {
  private prepared = false;
  private prepareError: Error | null = null;
  readonly ready: Promise<void>;
  private readonly listeners: Array<(c: ModelChanges) => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<ModelChanges> | null = null;
  private closed = false;
  /** What GET /v1/models lists: the parts that run models add their sources at start. */
  readonly catalogue = new ModelCatalogue();

  private constructor(
    readonly registry: ModelRegistry,
    readonly runtime: InferenceRuntime,
    private readonly log: Logger,
    private readonly syncMs: number,
  ) {
    for (const p of registry.problems) log.error({ manifest: p.path }, p.message);
    this.ready = registry
      .prepareMissing(log)
      .then(
        () => {
          this.prepared = true;
          log.info('models ready');
        },
        (e: Error) => {
          this.prepareError = e;
          log.error({ err: e }, 'model preparation failed');
        },
      )
      .then(() => this.preload(registry.list().map((r) => r.manifest.id)));
    if (syncMs > 0) this.schedule();
  }

  /** `inference`: the configuration's inference section (providers, threads, queue depth, worker mode, idle unload). */
  static async open(
    dataDir: string,
    modelsDir: string,
    log: Logger,
    inference: RuntimeOptions = {},
    opts: { syncMs?: number } = {},
  ): Promise<ModelsService> {
    const registry = await ModelRegistry.open(dataDir, { modelsDir });
    return new ModelsService(
      registry,
      new InferenceRuntime({ ...inference, log: log.child({ component: 'inference' }) }),
      log,
      opts.syncMs ?? 0,
    );
  }

  isReady(): boolean {
    return this.prepared;
  }

  /** Called with every change refresh() finds (after the runtime dropped removed or replaced models). */
  onChange(fn: (c: ModelChanges) => void): void {
    this.listeners.push(fn);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.refresh()
        .catch((e: Error) => this.log.error({ err: e }, 'model folder re-read failed'))
        .finally(() => {
          if (!this.closed) this.schedule();
        });
    }, this.syncMs);
    this.timer.unref();
  }

  /** Re-reads the data dir's manifests now and applies what changed (one refresh at a time). */
  refresh(): Promise<ModelChanges> {
    this.refreshing ??= this.applyChanges().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async applyChanges(): Promise<ModelChanges> {
    const c = await this.registry.reload();
    // Settings a running model may take in place: its loaded sessions, warm-up and queued runs stay. One it
    // cannot take so (a session count on the CPU) is a change: its sessions load again. A model not registered
    // takes them when it is.
    const retuned = c.retuned;
    c.retuned = [];
    for (const id of retuned) {
      const h = this.registry.has(id) ? this.runtime.model(id) : undefined;
      if (!h || h.retune(this.registry.spec(id))) c.retuned.push(id);
      else c.changed.push(id);
    }
    for (const id of [...c.removed, ...c.changed]) await this.runtime.unregister(id);
    for (const id of [...c.added, ...c.changed]) {
      try {
        await this.registry.prepare(id);
      } catch (e) {
        this.log.error(
          { model: id, err: (e as Error).message },
          `bring-your-own model ${id} could not be prepared: ${(e as Error).message}`,
        );
      }
    }
    if (c.added.length || c.removed.length || c.changed.length || c.retuned.length) {
      this.log.info(
        c,
        `models changed: ${[...c.added.map((i) => `+${i}`), ...c.removed.map((i) => `-${i}`), ...c.changed.map((i) => `~${i}`), ...c.retuned.map((i) => `${i} (settings applied in place)`)].join(' ')}`,
      );
      for (const fn of this.listeners) fn(c);
      // A model retuned to preload loads now; one already loaded is left as it is.
      const unloaded = c.retuned.filter((id) => !this.runtime.model(id)?.loadedSessions);
      await this.preload([...c.added, ...c.changed, ...unloaded]);
    }
    return c;
  }

  /** Loads the models among `ids` whose manifest asks for it (runtime.preload) now rather than on first use. */
  private async preload(ids: string[]): Promise<void> {
    for (const id of ids) {
      if (!this.registry.has(id) || !this.registry.runtimeOf(id)?.preload) continue;
      try {
        await this.runtime.register(this.registry.spec(id)).session();
        this.log.info({ model: id }, `model ${id} preloaded`);
      } catch (e) {
        this.log.error(
          { model: id, err: (e as Error).message },
          `model ${id} could not be preloaded: ${(e as Error).message}`,
        );
      }
    }
  }

  /** Ends the inference worker threads. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.refreshing?.catch(() => {});
    await this.runtime.close();
  }
  get error(): Error | null {
    return this.prepareError;
  }
}
