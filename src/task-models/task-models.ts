// The task models as one object: the detectors (each created on first use, shared by every caller) and
// PP-OCR, both run through the server's model registry and inference runtime (one set of worker threads and
// queues). The engines live in detection/ and ocr/, below every feature; the composition root builds one
// TaskModels per process and hands it to the parts through the services object (vision's routes, the video
// pipeline's detect/ocr steps, the multimodal embedder, the models part's add check).
import type { ModelRegistry } from '../inference/registry.js';
import type { InferenceRuntime } from '../inference/runtime.js';
import type { RgbImage } from '../media/rgb-image.js';
import { errors } from '../base/errors.js';
import { DEFAULT_DETECT_MODEL, Detector } from '../detection/detect.js';
import { checkModelOnSample, type ModelCheck } from '../detection/model-check.js';
import { OcrEngine, type BBox, type OcrOptions, type OcrResult } from '../ocr/engine.js';

/** What the task models run on: the registry (with its background preparation) and the runtime. */
export interface TaskModelSource {
  registry: ModelRegistry;
  runtime: InferenceRuntime;
  /** Settles when the registry's models are prepared. */
  ready: Promise<void>;
  isReady(): boolean;
}

export class TaskModels {
  private readonly detectors = new Map<string, Promise<Detector>>();
  /** PP-OCR (and Tesseract languages), its models run through this registry and runtime. */
  readonly ocr: OcrEngine;

  constructor(private readonly source: TaskModelSource) {
    this.ocr = new OcrEngine(async () => ({ registry: source.registry, runtime: source.runtime }));
  }

  /** Runs a registered model on the sample image (the check of an added model). */
  checkModel(id: string): Promise<ModelCheck> {
    return checkModelOnSample(this.source.runtime, this.source.registry, id);
  }

  /** Forgets cached detectors of models that were removed or replaced (the next request builds them anew). */
  modelsChanged(ids: string[]): void {
    for (const id of ids) this.detectors.delete(id);
  }

  /** The registered detectors a request may name: every detect manifest whose file was prepared. */
  detectorIds(): string[] {
    const r = this.source.registry;
    return r
      .list()
      .filter((m) => m.manifest.task === 'detect' && !r.prepareFailure(m.manifest.id))
      .map((m) => m.manifest.id);
  }

  /**
   * A detector by model id (default the built-in), loaded once and shared; a failed load is retried by the
   * next call. An id that is no registered detector is a 400 unknown_model on `param`, listing the ids.
   */
  detector(id: string = DEFAULT_DETECT_MODEL, param = 'model'): Promise<Detector> {
    if (!this.detectorIds().includes(id))
      return Promise.reject(errors.unknownModel(param, id, 'detect', this.detectorIds()));
    let p = this.detectors.get(id);
    if (!p) {
      p = Detector.create(this.source.runtime, this.source.registry, id);
      this.detectors.set(id, p);
      p.catch(() => {
        if (this.detectors.get(id) === p) this.detectors.delete(id);
      });
    }
    return p;
  }

  /**
   * The detector once the models are prepared, waiting at most `waitMs` for preparation; still unprepared
   * then, a 503 not_ready ApiError (the caller retries later). An unknown id is refused before any wait.
   */
  async readyDetector(waitMs: number, id: string = DEFAULT_DETECT_MODEL, param = 'model'): Promise<Detector> {
    const m = this.source;
    if (!this.detectorIds().includes(id)) throw errors.unknownModel(param, id, 'detect', this.detectorIds());
    if (!m.isReady()) {
      await Promise.race([m.ready, new Promise((r) => setTimeout(r, waitMs).unref())]);
      if (!m.isReady()) throw errors.notReady('The detection model');
    }
    return this.detector(id, param);
  }

  /** Reads the text of a whole image (PP-OCR). */
  ocrImage(image: RgbImage, opts?: OcrOptions): Promise<OcrResult> {
    return this.ocr.ocrImage(image, opts);
  }

  /** Reads the text inside one box of an image. */
  ocrRegion(image: RgbImage, box: BBox, opts?: OcrOptions): Promise<OcrResult> {
    return this.ocr.ocrRegion(image, box, opts);
  }
}
