// The vision part's models as one object: the detector (created on first use, shared by every caller) and
// PP-OCR, both run through the server's model registry and inference runtime (one set of worker threads and
// queues). Vision owns them; the composition root builds one per process and lends it to other parts through
// the services object (the video pipeline's detect/ocr steps, the multimodal embedder), so nothing below the
// feature parts has to know about detectors or OCR.
import type { ModelRegistry } from './inference/registry.js';
import type { InferenceRuntime } from './inference/runtime.js';
import type { ServedModel } from './models/model-catalogue.js';
import type { RgbImage } from './media/rgb-image.js';
import { errors } from './errors.js';
import { DEFAULT_DETECT_MODEL, Detector } from './detection/detect.js';
import { checkModelOnSample } from './detection/model-check.js';
import type { ModelCheck } from './models/model-install.js';
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
  private readonly detectors = new Map<string, Promise<Detector>>();

  constructor(private readonly source: VisionModelSource) {
    // OCR runs its PP-OCR models through this registry and runtime.
    useOcrModelSource({ registry: source.registry, runtime: source.runtime });
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
    return r.list().filter((m) => m.manifest.task === 'detect' && !r.prepareFailure(m.manifest.id)).map((m) => m.manifest.id);
  }

  /**
   * A detector by model id (default the built-in), loaded once and shared; a failed load is retried by the
   * next call. An id that is no registered detector is a 400 unknown_model on `param`, listing the ids.
   */
  detector(id: string = DEFAULT_DETECT_MODEL, param = 'model'): Promise<Detector> {
    if (!this.detectorIds().includes(id)) return Promise.reject(errors.unknownModel(param, id, 'detect', this.detectorIds()));
    let p = this.detectors.get(id);
    if (!p) {
      p = Detector.create(this.source.runtime, this.source.registry, id);
      this.detectors.set(id, p);
      p.catch(() => { if (this.detectors.get(id) === p) this.detectors.delete(id); });
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

  /** GET /v1/models entries of the detectors (a detector not loadable yet is listed with its reason). */
  async detectorEntries(): Promise<ServedModel[]> {
    const r = this.source.registry;
    const out: ServedModel[] = [];
    for (const { manifest, builtin } of r.list().filter((m) => m.manifest.task === 'detect')) {
      const id = manifest.id;
      const entry: ServedModel = {
        id, object: 'model', task: 'detect', default: id === DEFAULT_DETECT_MODEL,
        source: builtin ? 'builtin' : 'bring-your-own', description: manifest.description || undefined,
      };
      const failed = r.prepareFailure(id);
      if (failed) { out.push({ ...entry, error: failed }); continue; }
      if (!r.isPrepared(id)) { out.push(entry); continue; }
      try {
        const d = await this.detector(id);
        out.push({ ...entry, labels_count: d.labels.length, labels: d.labels, input_size: [d.pre.width, d.pre.height], layout: d.layout });
      } catch (e) {
        out.push({ ...entry, error: (e as Error).message });
      }
    }
    return out;
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
