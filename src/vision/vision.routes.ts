// POST /v1/vision/describe | ocr | detect (docs/api.md, "Vision"). Each handler checks its fields before any
// work, loads the image (the one image input path), runs the models inside the request's signal (queued
// model work is dropped when the client goes away), writes one usage-ledger row and answers
// {..., model, usage}. Usage follows the one formula of usage-tokens.ts.
import type { RequestContext, RouteDef } from '../http/route.js';
import { defineRoute } from '../http/route.js';
import type { Services } from '../services.js';
import { type ApiError, errors } from '../errors.js';
import { ModelQueue } from '../inference/model-queue.js';
import { withRequestSignal } from '../inference/runtime.js';
import { loadImage, parseImageInput, type LoadedImage } from '../media/image-input.js';
import type { RgbImage } from '../media/rgb-image.js';
import type { Detector } from './detect.js';
import { ocrImage, type OcrResult } from './ocr/engine.js';
import { routeLanguage } from './ocr/languages.js';
import { BUILTIN_DESCRIBE_MODEL, DESCRIBE_LANGUAGES, describeImage, describeLanguage } from './describe/describer.js';
import { DescribeBody, DescribeResult, DetectBody, DetectResult, OcrBody, OcrResult as OcrResultSchema } from './schemas.js';
import { autoDetail, imageTokens, textTokens, type Usage } from './usage-tokens.js';
import { VlmError, VlmProvider, vlmPromptText } from './vlm-provider.js';

/** How long a request waits for model preparation at start before it is told to retry (503 not_ready). */
const MODELS_READY_WAIT_MS = 5_000;
const LANGUAGE_CODE = /^[a-z]{2,3}([-_][a-z0-9]{2,8})*$/i;

type Endpoint = '/v1/vision/describe' | '/v1/vision/ocr' | '/v1/vision/detect';

export function visionRoutes(s: Services): RouteDef[] {
  const vlmConfig = s.config.vlm;
  const vlm = vlmConfig ? new VlmProvider(vlmConfig) : null;
  if (vlm) s.log.info({ url: vlmConfig!.url, model: vlm.model, fallback: vlmConfig!.fallback }, `describe uses the VLM ${vlm.model}`);

  // An OCR job is several model runs plus main-thread pre/post-processing; whole jobs get a bounded queue
  // here (beside the runtime's per-model queues) so OCR traffic is refused with 503 before any of that work
  // starts, and a gone client's job is dropped.
  const ocrQueue = new ModelQueue<{ image: RgbImage; language?: string }, OcrResult>(
    { name: 'ocr', depth: s.models.runtime.queueDepth },
    async ([job]) => [await ocrImage(job!.image, { language: job!.language })],
  );
  const ocr = (image: RgbImage, language: string | undefined, signal: AbortSignal) => ocrQueue.submit({ image, language }, signal);

  const detector = async (): Promise<Detector> => {
    if (!s.models.isReady()) {
      await Promise.race([s.models.ready, new Promise((r) => setTimeout(r, MODELS_READY_WAIT_MS).unref())]);
      if (!s.models.isReady()) throw errors.notReady('The detection model');
    }
    return s.models.detector();
  };

  const load = (ctx: RequestContext, input: ReturnType<typeof parseImageInput>): Promise<LoadedImage> =>
    loadImage(input, { signal: ctx.signal, allowPrivate: s.config.allowPrivateUrls });

  /** One ledger row per answered request (none when the client went away before the answer), written after the reply. */
  const bill = (ctx: RequestContext, endpoint: Endpoint, model: string, usage: Usage, started: number) => {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    s.usage.recordAfterReply({
      projectId: ctx.principal.projectId, keyId: ctx.principal.keyId, endpoint, model,
      inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, ms: performance.now() - started,
    });
  };

  const tags = ['vision'];
  const errorsDoc = {
    400: { description: 'Invalid request, image input or image (invalid_request_error)' },
    413: { description: 'Image over 20 MB (payload_too_large)' },
    503: { description: 'Inference queue full (overloaded_error, Retry-After)' },
  };

  return [
    defineRoute({
      method: 'POST', path: '/v1/vision/detect', auth: 'key', tags, body: DetectBody,
      summary: 'Detect objects (COCO classes) with boxes in source-image pixels',
      responses: { 200: { description: 'Detected objects', schema: DetectResult }, ...errorsDoc },
      handler: async (ctx: RequestContext<DetectBody>) => {
        const started = performance.now();
        const input = parseImageInput(ctx.body);
        const det = await detector();
        det.classFilter(ctx.body.classes); // unknown class -> 400 before any fetch
        const img = await load(ctx, input);
        const objects = await withRequestSignal(ctx.signal, () =>
          det.detect(img, { classes: ctx.body.classes, confidence_threshold: ctx.body.confidence_threshold ?? 0.5 }));
        const usage = {
          input_tokens: imageTokens(img.width, img.height, autoDetail(img.width, img.height)),
          output_tokens: textTokens(JSON.stringify(objects)),
        };
        bill(ctx, '/v1/vision/detect', det.modelId, usage, started);
        return { json: { objects, model: det.modelId, usage } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/vision/ocr', auth: 'key', tags, body: OcrBody,
      summary: 'Extract text: full text in reading order and line blocks with boxes',
      responses: { 200: { description: 'Text and blocks', schema: OcrResultSchema }, ...errorsDoc },
      handler: async (ctx: RequestContext<OcrBody>) => {
        const started = performance.now();
        const input = parseImageInput(ctx.body);
        await routeLanguage(ctx.body.language); // unsupported language -> 400 naming the supported ones
        const img = await load(ctx, input);
        const r = await ocr(img, ctx.body.language, ctx.signal);
        const usage = {
          input_tokens: imageTokens(img.width, img.height, autoDetail(img.width, img.height)),
          output_tokens: textTokens(r.text),
        };
        bill(ctx, '/v1/vision/ocr', r.model, usage, started);
        return { json: { text: r.text, blocks: r.blocks, model: r.model, usage } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/vision/describe', auth: 'key', tags, body: DescribeBody,
      summary: vlm ? `Describe an image (VLM ${vlm.model})` : 'Describe an image in English or Chinese (built-in describer)',
      responses: { 200: { description: 'Description', schema: DescribeResult }, ...errorsDoc, 502: { description: 'The configured VLM provider failed (api_error, vlm_provider_error)' } },
      handler: async (ctx: RequestContext<DescribeBody>) => {
        const started = performance.now();
        const body = ctx.body;
        const input = parseImageInput(body);
        const builtinLanguage = describeLanguage(body.language);
        if (!builtinLanguage && !(vlm && LANGUAGE_CODE.test(body.language ?? ''))) throw unsupportedLanguage(body.language, !!vlm);
        const img = await load(ctx, input);

        if (vlm) {
          const detail = body.detail ?? autoDetail(img.width, img.height);
          try {
            const reply = await vlm.describe({
              bytes: img.bytes, mime: `image/${img.format}`, prompt: body.prompt, language: body.language, detail, signal: ctx.signal,
            });
            const usage = reply.usage ?? {
              input_tokens: imageTokens(img.width, img.height, detail) + textTokens(vlmPromptText(body.prompt, body.language)),
              output_tokens: textTokens(reply.text),
            };
            bill(ctx, '/v1/vision/describe', reply.model, usage, started);
            return { json: { description: reply.text, model: reply.model, usage } };
          } catch (e) {
            if (!(e instanceof VlmError)) throw e;
            if (!vlm.config.fallback || !builtinLanguage) {
              ctx.log.warn({ err: e.message, model: vlm.model }, 'VLM provider failed');
              throw e.toApiError();
            }
            ctx.log.warn({ err: e.message, model: vlm.model }, 'VLM provider failed; falling back to the built-in describer');
          }
        }

        const det = await detector();
        const d = await withRequestSignal(ctx.signal, () => describeImage(
          { detector: det, ocr: (image) => ocr(image, 'auto', ctx.signal) },
          { image: img, prompt: body.prompt, language: builtinLanguage!, detail: body.detail },
        ));
        const usage = {
          input_tokens: imageTokens(img.width, img.height, d.detail) + textTokens(body.prompt ?? ''),
          output_tokens: textTokens(d.description),
        };
        bill(ctx, '/v1/vision/describe', BUILTIN_DESCRIBE_MODEL, usage, started);
        return { json: { description: d.description, model: BUILTIN_DESCRIBE_MODEL, usage } };
      },
    }),
  ];
}

function unsupportedLanguage(language: string | undefined, vlm: boolean): ApiError {
  const supported = vlm ? `${DESCRIBE_LANGUAGES.join(', ')} or any language code such as fr, de-CH (answered by the configured VLM)` : DESCRIBE_LANGUAGES.join(', ');
  return errors.unsupportedLanguage('describe', language, supported);
}
