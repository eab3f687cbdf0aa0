// The models a running server uses: registry (prepared in the background at start, /readyz waits for it),
// one runtime, and lazily created task objects (detector, ...).
import type { Logger } from '../log.js';
import { ModelRegistry } from './registry.js';
import { InferenceRuntime, type RuntimeOptions } from './runtime.js';
import { Detector } from '../vision/detect.js';
import { useOcrModelSource } from '../vision/ocr/ocr-models.js';

export class ModelsService {
  private prepared = false;
  private prepareError: Error | null = null;
  private detectorPromise: Promise<Detector> | null = null;
  readonly ready: Promise<void>;

  private constructor(readonly registry: ModelRegistry, readonly runtime: InferenceRuntime, log: Logger) {
    // OCR runs its PP-OCR models through this registry and runtime (one set of worker threads and queues).
    useOcrModelSource({ registry, runtime });
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

  detector(): Promise<Detector> {
    this.detectorPromise ??= Detector.create(this.runtime, this.registry).catch((e) => { this.detectorPromise = null; throw e; });
    return this.detectorPromise;
  }
}
