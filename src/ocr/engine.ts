// The OCR engine: a decoded RGB image in, /v1/vision/ocr's {text, blocks, model} out. PP-OCRv4 (detection ->
// rectified, batched recognition -> layout) for auto/en/zh; Tesseract for other installed languages.
import { allowedClasses } from './ctc-decode.js';
import { DETECT_DEFAULTS, detectText } from './detect-text.js';
import type { Point } from './geometry.js';
import { routeLanguage } from './languages.js';
import { type BBox, type LineText, type OcrBlock, lineWords, pageText, readingOrder } from './layout.js';
import { OcrModelLoader, ocrModelSourceFor, runningFor, type OcrModelSource } from './ocr-models.js';
import { recognizeLines } from './recognize-text.js';
import type { RgbImage } from '../media/rgb-image.js';
import type { RunContext, RuntimeOptions } from '../inference/runtime.js';
import { tesseractOcr } from './tesseract.js';

export type { BBox, OcrBlock } from './layout.js';

export const PP_OCR_MODEL = 'pp-ocrv4';

/**
 * Pages an OCR queue works on at once, given the sessions each model has: two a session, so that while the
 * sessions run one page's models the main thread prepares or finishes another's (crops, box geometry, CTC
 * decoding). One a session left a session idle between its page's runs, and the in-process pipeline made
 * fewer pages a second (docs/capacity.md, "OCR pages and batches").
 */
export const ocrPagesInFlight = (sessions: number) => 2 * Math.max(1, sessions);

/** `signal` and `priority`: on whose behalf the models run (inference/runtime.ts, RunContext). */
export interface OcrOptions extends RunContext {
  /** 'auto' (default), 'en', 'zh', or an installed Tesseract language such as 'de'; else a 400. */
  language?: string;
  /** One block per detected line (default) or per word. */
  granularity?: 'line' | 'word';
  /** Turn upside-down lines over before reading them (default true). */
  angleClassifier?: boolean;
  /** Longest side the text detector sees; larger images are scaled down for it (default 960). */
  maxSide?: number;
}

export interface OcrResult {
  text: string;
  blocks: OcrBlock[];
  model: string;
}

/** PP-OCR's drop_score: lines read with less mean confidence are mostly texture, not text. */
const MIN_LINE_CONFIDENCE = 0.5;

async function ocrImage(loader: OcrModelLoader, image: RgbImage, opts: OcrOptions = {}): Promise<OcrResult> {
  checkImage(image);
  const route = await routeLanguage(opts.language);
  const granularity = opts.granularity ?? 'line';
  if (route.engine === 'tesseract') {
    const r = await tesseractOcr(image, route.lang, granularity);
    return { ...r, model: route.model };
  }
  const models = runningFor(await loader.load(), opts);
  const detected = await detectText(models.detection, image, {
    ...DETECT_DEFAULTS,
    maxSide: opts.maxSide ?? DETECT_DEFAULTS.maxSide,
  });
  const recognized = await recognizeLines(models, models.charset, image, detected, {
    useAngleClassifier: opts.angleClassifier ?? true,
    allowed: allowedClasses(models.charset, route.hint),
  });
  const kept = recognized.filter((l) => l.confidence >= MIN_LINE_CONFIDENCE);
  const lines = kept
    .map((l) => lineWords(l, image.width, image.height))
    .filter((l): l is LineText => l !== null && l.block.text.trim() !== '');
  let rows = readingOrder(lines.map((l) => ({ ...l.block, words: l.words })));
  // A page held upside down: its lines were turned over one by one, and it reads bottom-up, right to left.
  if (kept.length > 0 && kept.filter((l) => l.flipped).length * 2 > kept.length) {
    rows = rows.reverse().map((r) => r.reverse());
  }
  const blocks: OcrBlock[] =
    granularity === 'word'
      ? rows.flat().flatMap((b) => b.words.map(({ text, bbox, confidence }) => ({ text, bbox, confidence })))
      : rows.flat().map(({ text, bbox, confidence }) => ({ text, bbox, confidence }));
  return { text: pageText(rows), blocks, model: PP_OCR_MODEL };
}

/**
 * OCR of one region of a larger image (the video pipeline reads text inside detected objects). The region
 * gets a small margin so text touching its edge is still detected; boxes come back in the full image's pixels.
 */
async function ocrRegion(
  loader: OcrModelLoader,
  image: RgbImage,
  bbox: BBox,
  opts: OcrOptions = {},
): Promise<OcrResult> {
  checkImage(image);
  const [x1, y1, x2, y2] = bbox;
  const margin = Math.round(Math.max(4, 0.1 * Math.min(x2 - x1, y2 - y1)));
  const left = Math.max(0, Math.floor(Math.min(x1, x2) - margin));
  const top = Math.max(0, Math.floor(Math.min(y1, y2) - margin));
  const right = Math.min(image.width, Math.ceil(Math.max(x1, x2) + margin));
  const bottom = Math.min(image.height, Math.ceil(Math.max(y1, y2) + margin));
  if (right - left < 2 || bottom - top < 2) return { text: '', blocks: [], model: PP_OCR_MODEL };
  const crop = cropRgb(image, left, top, right - left, bottom - top);
  const r = await ocrImage(loader, crop, opts);
  const shift = (b: BBox): BBox => [b[0] + left, b[1] + top, b[2] + left, b[3] + top];
  return { ...r, blocks: r.blocks.map((b) => ({ ...b, bbox: shift(b.bbox) })) };
}

/** Reads an image that is already one line of text (no detection), e.g. a word crop or a plate. */
async function readLine(
  loader: OcrModelLoader,
  image: RgbImage,
  opts: Pick<OcrOptions, 'language' | 'angleClassifier' | 'signal' | 'priority'> = {},
): Promise<OcrBlock & { model: string }> {
  checkImage(image);
  const route = await routeLanguage(opts.language);
  if (route.engine === 'tesseract') {
    const r = await tesseractOcr(image, route.lang, 'line');
    return {
      text: r.text.replace(/\n/g, ' '),
      bbox: [0, 0, image.width, image.height],
      confidence: r.blocks[0]?.confidence ?? 0,
      model: route.model,
    };
  }
  const models = runningFor(await loader.load(), opts);
  const corners: Point[] = [
    [0, 0],
    [image.width, 0],
    [image.width, image.height],
    [0, image.height],
  ];
  const [line] = await recognizeLines(models, models.charset, image, [{ corners, score: 1 }], {
    useAngleClassifier: opts.angleClassifier ?? false,
    allowed: allowedClasses(models.charset, route.hint),
  });
  const words = lineWords(line, image.width, image.height);
  return {
    text: words?.block.text ?? '',
    bbox: [0, 0, image.width, image.height],
    confidence: line.confidence,
    model: PP_OCR_MODEL,
  };
}

/**
 * OCR over one set of PP-OCR models (the server's registry and runtime, or a data dir's), loaded on first use.
 * The methods are bound, so they can be handed around on their own.
 */
export class OcrEngine {
  readonly #models: OcrModelLoader;

  constructor(source: () => Promise<OcrModelSource>) {
    this.#models = new OcrModelLoader(source);
  }

  /** An engine over `dataDir`'s registry (its OCR models prepared if missing), for scripts and tests. */
  static forDataDir(dataDir: string, runtime?: RuntimeOptions): OcrEngine {
    return new OcrEngine(() => ocrModelSourceFor(dataDir, runtime));
  }

  /** Reads the text of a whole image. */
  readonly ocrImage = (image: RgbImage, opts?: OcrOptions): Promise<OcrResult> => ocrImage(this.#models, image, opts);
  /**
   * OCR of one region of a larger image (the video pipeline reads text inside detected objects). The region
   * gets a small margin so text touching its edge is still detected; boxes come back in the full image's pixels.
   */
  readonly ocrRegion = (image: RgbImage, bbox: BBox, opts?: OcrOptions): Promise<OcrResult> =>
    ocrRegion(this.#models, image, bbox, opts);
  /** Reads an image that is already one line of text (no detection), e.g. a word crop or a plate. */
  readonly readLine = (
    image: RgbImage,
    opts?: Pick<OcrOptions, 'language' | 'angleClassifier' | 'signal' | 'priority'>,
  ): Promise<OcrBlock & { model: string }> => readLine(this.#models, image, opts);
}

function cropRgb(image: RgbImage, left: number, top: number, width: number, height: number): RgbImage {
  const out = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const src = ((top + y) * image.width + left) * 3;
    out.set(image.data.subarray(src, src + width * 3), y * width * 3);
  }
  return { data: out, width, height, channels: 3 };
}

// Our own callers pass decoded images; a mismatch is a programming error, not a client's.
function checkImage(image: RgbImage): void {
  if (
    image.channels !== 3 ||
    image.data.length < image.width * image.height * 3 ||
    image.width < 1 ||
    image.height < 1
  ) {
    throw new Error(
      `OCR expects packed RGB (${image.width}x${image.height}x3) but received ${image.data.length} bytes, ${image.channels} channels`,
    );
  }
}
