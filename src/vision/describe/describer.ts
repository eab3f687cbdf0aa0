// The built-in describer (model "sightflow-describe-v1"): no language model, just the detector, OCR and
// colour statistics turned into prose. Low detail detects on a downscaled copy and says what is there;
// high detail adds positions, colours, readable text and the picture's main colours.
import sharp from 'sharp';
import type { RgbImage } from '../../media/rgb-image.js';
import type { DetectedObject, Detector } from '../../detection/detect.js';
import type { OcrResult } from '../../ocr/engine.js';
import { autoDetail, type Detail } from '../../usage/tokens.js';
import { writeChinese } from './chinese.js';
import { writeEnglish } from './english.js';
import { buildFacts, imagePalette, type Facts } from './facts.js';
import { parsePrompt, type PromptIntent } from './prompt.js';

export const BUILTIN_DESCRIBE_MODEL = 'sightflow-describe-v1';
export const DESCRIBE_LANGUAGES = ['en', 'zh'] as const;
export type DescribeLanguage = (typeof DESCRIBE_LANGUAGES)[number];
/**
 * The built-in detector's scores for plainly visible objects often sit between 0.4 and 0.6, so a
 * description counts from 0.4 (detect's default of 0.5 would miss a third of them); a count answer equals
 * what /v1/vision/detect returns with confidence_threshold 0.4.
 */
export const DESCRIBE_CONFIDENCE = 0.4;
/** Low detail looks at a copy at most this large. */
export const LOW_DETAIL_MAX_SIDE = 512;

export interface DescriberModels {
  detector: Detector;
  /** OCR of the whole image (the route's bounded OCR queue). */
  ocr: (image: RgbImage) => Promise<OcrResult>;
}

export interface DescribeRequest {
  image: RgbImage;
  prompt?: string;
  language: DescribeLanguage;
  /** Left out: by image size, or high when the prompt asks about text. */
  detail?: Detail;
  /** The request's: the detector's runs not yet started are dropped when it fires. */
  signal?: AbortSignal;
}

export interface Description {
  description: string;
  /** The detail actually used (what usage bills). */
  detail: Detail;
  intent: PromptIntent;
  facts: Facts;
}

/** en, en-GB -> en; zh, zh-CN, zh-Hans -> zh; anything else -> undefined. */
export function describeLanguage(code: string | undefined): DescribeLanguage | undefined {
  const primary = (code ?? 'en').trim().toLowerCase().split(/[-_]/)[0];
  return (DESCRIBE_LANGUAGES as readonly string[]).includes(primary!) ? (primary as DescribeLanguage) : undefined;
}

export async function describeImage(models: DescriberModels, req: DescribeRequest): Promise<Description> {
  const intent = parsePrompt(req.prompt, models.detector.labels);
  const detail = req.detail ?? (intent.kind === 'text' ? 'high' : autoDetail(req.image.width, req.image.height));
  let facts: Facts;
  if (detail === 'low') {
    const small = await downscale(req.image, LOW_DETAIL_MAX_SIDE);
    const objects = await models.detector.detect(small, {
      confidence_threshold: DESCRIBE_CONFIDENCE,
      signal: req.signal,
    });
    facts = buildFacts(small, objects, { detailed: false });
  } else {
    const [objects, ocr]: [DetectedObject[], OcrResult] = await Promise.all([
      models.detector.detect(req.image, { confidence_threshold: DESCRIBE_CONFIDENCE, signal: req.signal }),
      models.ocr(req.image),
    ]);
    facts = buildFacts(req.image, objects, { ocr, palette: imagePalette(req.image), detailed: true });
  }
  const description = req.language === 'zh' ? writeChinese(facts, intent) : writeEnglish(facts, intent);
  return { description, detail, intent, facts };
}

async function downscale(image: RgbImage, maxSide: number): Promise<RgbImage> {
  const scale = maxSide / Math.max(image.width, image.height);
  if (scale >= 1) return image;
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const data = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill' })
    .raw()
    .toBuffer();
  return { data, width, height, channels: 3 };
}
