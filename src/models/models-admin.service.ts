// Model management behind the admin API: list every registered model with its serving state, add one from a
// URL or hub reference (download, sample check, files into the data dir, and on PostgreSQL into the shared
// store for the other nodes), remove one. The task models' check runs the model on the sample image.
import type { Config } from '../config/index.js';
import type { Logger } from '../base/log.js';
import type { Db } from '../store/db.js';
import type { TaskModels } from '../task-models/task-models.js';
import type { ModelsService } from './models-service.js';
import { errors, isApiError } from '../base/errors.js';
import { addModel, removeModel, type AddedModel } from './model-install.js';
import type { RegisteredModel } from '../inference/registry.js';
import type { ModelState } from '../inference/runtime.js';
import { publishModel, unpublishModel } from './model-publish.js';
import type { AddModelBody, ModelSettingsPatch } from './schemas.js';
import { applySettings, settingsOut } from './model-settings.js';
import { sameRuntime } from '../inference/settings-overrides.js';
import { publishSettings } from './settings-publish.js';

/**
 * What the models part runs on. The composition root hands it the services object (which has all of it);
 * naming the fields here keeps this part below the services object that carries its ModelsService.
 */
export interface ModelsDeps {
  config: Config;
  log: Logger;
  db: Db;
  models: ModelsService;
  taskModels: TaskModels;
}

export class ModelsAdminService {
  constructor(private readonly s: ModelsDeps) {}

  private get shared(): boolean {
    return this.s.db.kind === 'postgres';
  }

  list() {
    return this.s.models.registry.list().map((r) => this.describe(r));
  }

  /** Fields GET /v1/models/:id adds to a registered model's entry (catalogue state provider). */
  state(id: string): Record<string, unknown> | undefined {
    const reg = this.s.models.registry;
    if (!reg.has(id)) return undefined;
    const { serving, settings, prepared, sha256, origin, added_at } = this.describe(reg.get(id));
    return { serving, settings, prepared, sha256, origin, added_at };
  }

  async add(body: AddModelBody, signal: AbortSignal) {
    const { registry, runtime } = this.s.models;
    const added: AddedModel = await addModel(
      {
        source: body.source,
        id: body.id,
        task: body.task,
        labels: body.labels,
        sha256: body.sha256,
        runtime: applySettings(undefined, body),
      },
      {
        registry,
        runtime,
        hubUrl: this.s.config.models.hubUrl,
        policy: { allowPrivate: this.s.config.allowPrivateUrls },
        check: (id) => this.s.taskModels.checkModel(id),
        signal,
        localFiles: false,
      },
    );
    if (this.shared) await publishModel(this.s.db, added.manifest, added.path);
    this.s.log.info(
      { model: added.manifest.id, sha256: added.sha256 },
      `model ${added.manifest.id} added: ${added.check.summary}`,
    );
    return { ...this.describe(registry.get(added.manifest.id)), check: added.check };
  }

  /**
   * Changes a model's serving settings while it runs, built in or added: kept in the data dir (and on
   * PostgreSQL for every node), then the running model takes them in place (ModelHandle.retune), or its sessions
   * load again with them at its next run (at once when it preloads). Returns the model as GET lists it.
   */
  async update(id: string, body: ModelSettingsPatch) {
    const { registry } = this.s.models;
    if (!registry.has(id)) throw errors.notFound('model', id);
    const next = applySettings(registry.runtimeOf(id), body);
    await registry.setOverride(id, next);
    if (this.shared) await publishSettings(this.s.db, id, next);
    // A re-read already under way may have read the file before this change: then one more takes it.
    for (let i = 0; i < 2 && !sameRuntime(registry.overrideOf(id), next); i++) await this.s.models.refresh();
    this.s.log.info({ model: id, settings: next }, `model ${id}: serving settings changed`);
    return this.describe(registry.get(id));
  }

  /**
   * Loads a model's first session on this node now (as a preload does: on a GPU it warms up), and answers once
   * it has. A load that fails for the model's own reasons is a 400 invalid_model with the reason.
   */
  async load(id: string) {
    const { registry, runtime } = this.s.models;
    if (!registry.has(id)) throw errors.notFound('model', id);
    const t0 = performance.now();
    try {
      await runtime.register(registry.spec(id)).session();
    } catch (e) {
      if (isApiError(e)) throw e;
      throw errors.invalidModel(`model ${id} did not load: ${(e as Error).message}`);
    }
    this.s.log.info({ model: id, ms: Math.round(performance.now() - t0) }, `model ${id} loaded on request`);
    return this.describe(registry.get(id));
  }

  /**
   * Unloads a model on this node: the runtime lets its handle go, so the runs queued or running on it finish on
   * its sessions (at most 60 s) and then they are released; a run after it loads the model again.
   */
  async unload(id: string) {
    const { registry, runtime } = this.s.models;
    if (!registry.has(id)) throw errors.notFound('model', id);
    await runtime.unregister(id);
    this.s.log.info({ model: id }, `model ${id} unloaded on request`);
    return this.describe(registry.get(id));
  }

  async remove(id: string) {
    const { registry, runtime } = this.s.models;
    await removeModel(registry, id);
    await runtime.unregister(id);
    this.s.taskModels.modelsChanged([id]);
    if (this.shared) await unpublishModel(this.s.db, id);
    return { id, object: 'model' as const, deleted: true as const };
  }

  private describe(r: RegisteredModel) {
    const m = r.manifest;
    const { registry, runtime } = this.s.models;
    const handle = runtime.model(m.id);
    const spec = registry.spec(m.id);
    const idle: ModelState = handle?.state() ?? {
      state: 'unloaded',
      providers: null,
      devices: null,
      engine: null,
      sessions: null,
      batch: null,
      warmup: null,
      memory_bytes: null,
      loaded_at: null,
      last_used_at: null,
      requests: 0,
      errors: 0,
      p50_ms: null,
      queue_depth: spec.queueDepth ?? runtime.queueDepth,
      pending: 0,
      idle_unload_s: (spec.idleUnloadMs ?? runtime.idleUnloadMs) / 1000,
      unloads: 0,
    };
    const src = m.source;
    return {
      id: m.id,
      object: 'model' as const,
      task: m.task,
      description: m.description,
      builtin: r.builtin,
      prepared: registry.isPrepared(m.id),
      sha256: m.sha256 ?? src.sha256 ?? null,
      origin: m.origin?.url ?? m.origin?.file ?? null,
      added_at: m.origin?.addedAt ?? null,
      labels: Array.isArray(m.labels) ? m.labels.length : 0,
      settings: settingsOut(registry.runtimeOf(m.id)),
      serving: idle,
    };
  }
}
