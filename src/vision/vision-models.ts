// The vision part's models as one object: the detector (created on first use, shared by every caller) and
// PP-OCR, both run through the server's model registry and inference runtime (one set of worker threads and
// queues). Vision owns them; the composition root builds one per process and lends it to other parts through
// the services object (the video pipeline's detect/ocr steps, the multimodal embedder), so nothing below the
// feature parts has to know about detectors or OCR.
import type { ModelRegistry } from '../inference/registry.js';
import type { InferenceRuntime } from '../inference/runtime.js';
import type { RgbImage } from '../media/rgb-image.js';
import { errors } from '../errors.js';
import { DEFAULT_DETECT_MODEL, Detector } from './detect.js';
import { checkModelOnSample } from './model-check.js';
import type { ModelCheck } from '../inference/model-install.js';
import { ocrImage, ocrRegion, type BBox, type OcrOptions, type OcrResult } from './ocr/engine.js';
import { useOcrModelSource } from './ocr/ocr-models.js';

/** What the vision models run on: the registry (with its background preparation) and the runtime. */
export interface VisionModelSource {
  registry: ModelRegistry;
  runtime: InferenceRuntime;
  /** Settles when the registry's models are prepared. */
  ready: Promise<void>;
  isReady(): boolean;
}

export class VisionModels {
  private detectorPromise: Promise<Detector> | null = null;

  constructor(private readonly source: VisionModelSource) {
    // OCR runs its PP-OCR models through this registry and runtime.
    useOcrModelSource({ registry: source.registry, runtime: source.runtime });
  }

  /** Runs a registered model on the sample image (the check of an added model). */
  checkModel(id: string): Promise<ModelCheck> {
    return checkModelOnSample(this.source.runtime, this.source.registry, id);
  }

  /** Forgets cached task objects of models that were removed or replaced. */
  modelsChanged(ids: string[]): void {
    if (this.detectorPromise && ids.includes(DEFAULT_DETECT_MODEL)) this.detectorPromise = null;
  }

  /** The detector, loaded once; a failed load is retried by the next call. */
  detector(): Promise<Detector> {
    this.detectorPromise ??= Detector.create(this.source.runtime, this.source.registry).catch((e) => { this.detectorPromise = null; throw e; });
    return this.detectorPromise;
  }

  /**
   * The detector once the models are prepared, waiting at most `waitMs` for preparation; still unprepared
   * then, a 503 not_ready ApiError (the caller retries later).
   */
  async readyDetector(waitMs: number): Promise<Detector> {
    const m = this.source;
    if (!m.isReady()) {
      await Promise.race([m.ready, new Promise((r) => setTimeout(r, waitMs).unref())]);
      if (!m.isReady()) throw errors.notReady('The detection model');
    }
    return this.detector();
  }

  /** Reads the text of a whole image (PP-OCR). */
  ocrImage(image: RgbImage, opts?: OcrOptions): Promise<OcrResult> {
    return ocrImage(image, opts);
  }

  /** Reads the text inside one box of an image. */
  ocrRegion(image: RgbImage, box: BBox, opts?: OcrOptions): Promise<OcrResult> {
    return ocrRegion(image, box, opts);
  }
}
