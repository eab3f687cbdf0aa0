// The models a running server uses: the registry (prepared in the background at start, /readyz waits for it)
// and one runtime (its worker threads and queues). Task objects built on them (the detector, OCR, embedders)
// belong to the parts that use them; this layer knows only model ids, files and sessions.
import type { Logger } from '../log.js';
import { ModelCatalogue } from './model-catalogue.js';
import { ModelRegistry } from './registry.js';
import { InferenceRuntime, type RuntimeOptions } from './runtime.js';

export class ModelsService {
  private prepared = false;
  private prepareError: Error | null = null;
  readonly ready: Promise<void>;
  /** What GET /v1/models lists: the parts that run models add their sources at start. */
  readonly catalogue = new ModelCatalogue();

  private constructor(readonly registry: ModelRegistry, readonly runtime: InferenceRuntime, log: Logger) {
    for (const p of registry.problems) log.error({ manifest: p.path }, p.message);
    this.ready = registry.prepareMissing(log).then(
      () => { this.prepared = true; log.info('models ready'); },
      (e: Error) => { this.prepareError = e; log.error({ err: e }, 'model preparation failed'); },
    );
  }

  /** `inference`: the configuration's inference section (providers, threads, queue depth, worker mode). */
  static async open(dataDir: string, modelsDir: string, log: Logger, inference: RuntimeOptions = {}): Promise<ModelsService> {
    const registry = await ModelRegistry.open(dataDir, { modelsDir });
    return new ModelsService(registry, new InferenceRuntime({ ...inference, log: log.child({ component: 'inference' }) }), log);
  }

  isReady(): boolean { return this.prepared; }

  /** Ends the inference worker threads. */
  async close(): Promise<void> { await this.runtime.close(); }
  get error(): Error | null { return this.prepareError; }
}
