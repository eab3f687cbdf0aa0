// Vision use cases: detect, OCR and describe. Each takes a validated body (schemas.ts) and the caller, checks
// its fields before any work, loads the image (the one image input path), runs the models inside the
// caller's signal (queued model work is dropped when the caller goes away), bills one usage-ledger row and
// returns {..., model, usage}. Usage follows the one formula of usage/tokens.ts. No HTTP here: the routes
// (and through them MCP) adapt requests to these calls.
import type { Services } from '../services/services.js';
import { type ApiError, errors } from '../base/errors.js';
import { ModelQueue } from '../inference/model-queue.js';
import { CHECK_ONLY, loadImage, parseImageInput, wholeImage, type LoadedImage } from '../media/image-input.js';
import { sourceSize, type DecodeFor } from '../media/image-decode.js';
import { releaseAfter, requestPixels, type PixelPool } from '../media/pixel-pool.js';
import type { RgbImage } from '../media/rgb-image.js';
import { bill, type Caller } from '../usage/billing.js';
import { DEFAULT_DETECT_MODEL, type Detector } from '../detection/detect.js';
import { ocrPagesInFlight, PP_OCR_MODEL, type OcrResult } from '../ocr/engine.js';
import type { ServedModel } from '../models/model-catalogue.js';
import { routeLanguage } from '../ocr/languages.js';
import { BUILTIN_DESCRIBE_MODEL, DESCRIBE_LANGUAGES, describeImage, describeLanguage } from './describe/describer.js';
import type { DescribeBody, DetectBody, OcrBody } from './schemas.js';
import { autoDetail, imageTokens, textTokens, type Usage } from '../usage/tokens.js';
import { VlmError, VlmProvider, vlmPromptText } from './vlm-provider.js';

/** How long a call waits for model preparation at start before it is told to retry (503 not_ready). */
const MODELS_READY_WAIT_MS = 5_000;
/** The OCR models `model` may name (Tesseract, where a language routes to it, is chosen by `language`). */
const OCR_MODELS: readonly string[] = [PP_OCR_MODEL];
const LANGUAGE_CODE = /^[a-z]{2,3}([-_][a-z0-9]{2,8})*$/i;

type Endpoint = '/v1/vision/describe' | '/v1/vision/ocr' | '/v1/vision/detect';

export interface DetectOutput {
  objects: Awaited<ReturnType<Detector['detect']>>;
  model: string;
  usage: Usage;
}
export interface OcrOutput {
  text: string;
  blocks: OcrResult['blocks'];
  model: string;
  usage: Usage;
}
export interface DescribeOutput {
  description: string;
  model: string;
  usage: Usage;
}

export class VisionService {
  /** The configured VLM that answers describe, or null for the built-in describer. */
  readonly vlm: VlmProvider | null;
  /**
   * An OCR job is several model runs plus main-thread pre/post-processing; whole jobs get a bounded queue
   * here (beside the runtime's per-model queues) so OCR traffic is refused with 503 before any of that work
   * starts, and a gone caller's job is dropped.
   */
  private readonly ocrQueue: ModelQueue<{ image: RgbImage; language?: string; signal: AbortSignal }, OcrResult>;

  constructor(private readonly s: Services) {
    const vlmConfig = s.config.vlm;
    this.vlm = vlmConfig ? new VlmProvider(vlmConfig) : null;
    if (this.vlm)
      s.log.info(
        { url: vlmConfig!.url, model: this.vlm.model, fallback: vlmConfig!.fallback },
        `describe uses the VLM ${this.vlm.model}`,
      );
    this.ocrQueue = new ModelQueue<{ image: RgbImage; language?: string; signal: AbortSignal }, OcrResult>(
      // Several pages at once (ocrPagesInFlight): one page's runs alone leave narrow sessions idle
      // (docs/capacity.md, "OCR pages and batches").
      { name: 'ocr', depth: s.models.runtime.queueDepth, concurrency: ocrPagesInFlight(s.models.runtime.sessions) },
      async ([job]) => [await s.taskModels.ocrImage(job!.image, { language: job!.language, signal: job!.signal })],
    );
  }

  async detect(caller: Caller, body: DetectBody): Promise<DetectOutput> {
    const started = performance.now();
    const input = parseImageInput(body);
    const det = await this.detector(body.model);
    det.classFilter(body.classes); // unknown class -> 400 before any fetch
    det.handle.checkRoom(); // a full queue refuses before the image is fetched and decoded
    // Decoded no larger than the model's input needs: boxes come back in the file's pixels.
    const img = await this.load(caller, input, requestPixels, det.decodeFor);
    const { width, height } = sourceSize(img);
    const objects = await releaseAfter(
      img,
      det.detect(img, {
        classes: body.classes,
        confidence_threshold: body.confidence_threshold ?? 0.5,
        signal: caller.signal,
      }),
    );
    const usage = {
      input_tokens: imageTokens(width, height, autoDetail(width, height)),
      output_tokens: await textTokens(JSON.stringify(objects)),
    };
    await this.bill(caller, '/v1/vision/detect', det.modelId, usage, started);
    return { objects, model: det.modelId, usage };
  }

  async ocr(caller: Caller, body: OcrBody): Promise<OcrOutput> {
    const started = performance.now();
    const input = parseImageInput(body);
    if (body.model !== undefined && !OCR_MODELS.includes(body.model))
      throw errors.unknownModel('model', body.model, 'ocr', OCR_MODELS);
    await routeLanguage(body.language); // unsupported language -> 400 naming the supported ones
    this.ocrQueue.checkRoom();
    const img = await this.load(caller, input, requestPixels);
    const r = await releaseAfter(img, this.ocrJob(img, body.language, caller.signal));
    const usage = {
      input_tokens: imageTokens(img.width, img.height, autoDetail(img.width, img.height)),
      output_tokens: await textTokens(r.text),
    };
    await this.bill(caller, '/v1/vision/ocr', r.model, usage, started);
    return { text: r.text, blocks: r.blocks, model: r.model, usage };
  }

  async describe(caller: Caller, body: DescribeBody): Promise<DescribeOutput> {
    const started = performance.now();
    const models = this.describeModels();
    if (body.model !== undefined && !models.includes(body.model))
      throw errors.unknownModel('model', body.model, 'describe', models);
    // Naming the built-in describer skips a configured VLM.
    const vlm = body.model === BUILTIN_DESCRIBE_MODEL ? null : this.vlm;
    const input = parseImageInput(body);
    const builtinLanguage = describeLanguage(body.language);
    if (!builtinLanguage && !(vlm && LANGUAGE_CODE.test(body.language ?? '')))
      throw unsupportedLanguage(body.language, !!vlm);
    // A VLM gets the bytes: the decode only checks them and gives their size, at the smallest size the decoder
    // makes, so a request holds next to no pixels while the VLM answers (docs/capacity.md, "JPEG decoding").
    let img = await this.load(caller, input, undefined, vlm ? CHECK_ONLY : undefined);
    const { width, height } = sourceSize(img);

    if (vlm) {
      const detail = body.detail ?? autoDetail(width, height);
      try {
        const reply = await vlm.describe({
          bytes: img.bytes,
          mime: `image/${img.format}`,
          prompt: body.prompt,
          language: body.language,
          detail,
          signal: caller.signal,
          traceparent: caller.traceparent,
        });
        const usage = reply.usage ?? {
          input_tokens:
            imageTokens(width, height, detail) + (await textTokens(vlmPromptText(body.prompt, body.language))),
          output_tokens: await textTokens(reply.text),
        };
        await this.bill(caller, '/v1/vision/describe', reply.model, usage, started);
        return { description: reply.text, model: reply.model, usage };
      } catch (e) {
        if (!(e instanceof VlmError)) throw e;
        if (!vlm.config.fallback || !builtinLanguage) {
          caller.log.warn({ err: e.message, model: vlm.model }, 'VLM provider failed');
          throw e.toApiError();
        }
        caller.log.warn(
          { err: e.message, model: vlm.model },
          'VLM provider failed; falling back to the built-in describer',
        );
        img = await wholeImage(img, input.param);
      }
    }

    const det = await this.detector();
    const d = await describeImage(
      { detector: det, ocr: (image) => this.ocrJob(image, 'auto', caller.signal) },
      { image: img, prompt: body.prompt, language: builtinLanguage!, detail: body.detail, signal: caller.signal },
    );
    const usage = {
      input_tokens: imageTokens(img.width, img.height, d.detail) + (await textTokens(body.prompt ?? '')),
      output_tokens: await textTokens(d.description),
    };
    await this.bill(caller, '/v1/vision/describe', BUILTIN_DESCRIBE_MODEL, usage, started);
    return { description: d.description, model: BUILTIN_DESCRIBE_MODEL, usage };
  }

  private ocrJob(image: RgbImage, language: string | undefined, signal: AbortSignal): Promise<OcrResult> {
    return this.ocrQueue.submit({ image, language, signal }, signal);
  }

  private detector(model?: string): Promise<Detector> {
    return this.s.taskModels.readyDetector(MODELS_READY_WAIT_MS, model ?? DEFAULT_DETECT_MODEL);
  }

  /** The ids `model` may name on describe: the configured VLM, and the built-in describer (always there). */
  describeModels(): string[] {
    return this.vlm ? [this.vlm.model, BUILTIN_DESCRIBE_MODEL] : [BUILTIN_DESCRIBE_MODEL];
  }

  /** GET /v1/models entries of the detectors (a detector not loadable yet is listed with its reason). */
  async detectorEntries(): Promise<ServedModel[]> {
    const r = this.s.models.registry;
    const out: ServedModel[] = [];
    for (const { manifest, builtin } of r.list().filter((m) => m.manifest.task === 'detect')) {
      const id = manifest.id;
      const entry: ServedModel = {
        id,
        object: 'model',
        task: 'detect',
        default: id === DEFAULT_DETECT_MODEL,
        source: builtin ? 'builtin' : 'bring-your-own',
        description: manifest.description || undefined,
      };
      const failed = r.prepareFailure(id);
      if (failed) {
        out.push({ ...entry, error: failed });
        continue;
      }
      if (!r.isPrepared(id)) {
        out.push(entry);
        continue;
      }
      try {
        const d = await this.s.taskModels.detector(id);
        out.push({
          ...entry,
          labels_count: d.labels.length,
          labels: d.labels,
          input_size: [d.pre.width, d.pre.height],
          layout: d.layout,
        });
      } catch (e) {
        out.push({ ...entry, error: (e as Error).message });
      }
    }
    return out;
  }

  /** GET /v1/models entries of OCR and describe. */
  catalogueEntries(): { ocr: ServedModel[]; describe: ServedModel[] } {
    return {
      ocr: OCR_MODELS.map((id) => ({
        id,
        object: 'model' as const,
        task: 'ocr' as const,
        default: true,
        source: 'builtin' as const,
        description:
          'PP-OCRv4 detection + recognition (Chinese and English); other languages through Tesseract where installed',
      })),
      describe: [
        ...(this.vlm
          ? [
              {
                id: this.vlm.model,
                object: 'model' as const,
                task: 'describe' as const,
                default: true,
                source: 'external' as const,
                description: 'The configured vision-language model',
              },
            ]
          : []),
        {
          id: BUILTIN_DESCRIBE_MODEL,
          object: 'model' as const,
          task: 'describe' as const,
          default: !this.vlm,
          source: 'builtin' as const,
          description: 'Built-in describer composed from detection, OCR and colour (en, zh)',
        },
      ],
    };
  }

  private load(
    caller: Caller,
    input: ReturnType<typeof parseImageInput>,
    pixels?: PixelPool,
    decodeFor?: DecodeFor,
  ): Promise<LoadedImage> {
    return loadImage(input, { ...this.s.config.urlPolicy, signal: caller.signal, pixels, decodeFor });
  }

  /** One ledger row per answered call (none when the caller went away before the answer), written after the reply. */
  private bill(caller: Caller, endpoint: Endpoint, model: string, usage: Usage, started: number): Promise<void> {
    return bill(
      this.s.usage,
      caller,
      { endpoint, model, inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, started },
      { unlessAborted: caller.signal },
    );
  }
}

function unsupportedLanguage(language: string | undefined, vlm: boolean): ApiError {
  const supported = vlm
    ? `${DESCRIBE_LANGUAGES.join(', ')} or any language code such as fr, de-CH (answered by the configured VLM)`
    : DESCRIBE_LANGUAGES.join(', ');
  return errors.unsupportedLanguage('describe', language, supported);
}
