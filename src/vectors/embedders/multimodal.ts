// multimodal-embedding-v1: one space for image, text and audio, built from real pretrained parts (no CLIP
// can be installed offline here). Layout of the 539 components, each block unit length before weighting:
//   [0, 100)    semantics: GloVe words (text, audio transcript) or what the detector/OCR see (image)
//   [100, 356)  sound: phone n-grams (text via the CMU dictionary, audio via the phone decoder)
//   [356, 538)  look: colour layout + grey structure (images only)
//   [538]       a small constant, so an input with nothing recognisable is still a valid unit vector
// Text and audio share semantics and sound; text and images share only semantics, so a caption ranks
// photos by meaning alone (the constant factor between them changes no ranking); images share semantics
// and look, so near-duplicates match.
import type { Logger } from '../../base/log.js';
import type { InferenceRuntime } from '../../inference/runtime.js';
import { ModelQueue } from '../../inference/model-queue.js';
import type { RgbImage } from '../../media/rgb-image.js';
import type { Detector } from '../../detection/detect.js';
import { dominantColor } from '../../media/colour.js';
import type { TaskModels } from '../../task-models/task-models.js';
import { ocrPagesInFlight } from '../../ocr/engine.js';
import { autoDetail, imageTokens, textTokens } from '../../usage/tokens.js';
import type { LoadedImage } from '../../media/image-input.js';
import { allSettled } from '../../media/pixel-pool.js';
import {
  normalize,
  place,
  type Embedder,
  type EmbedInput,
  type Embedding,
  type EmbeddingModelInfo,
  type Modality,
} from './embedder.js';
import { imageSemantics } from './image-semantics.js';
import { PHONETIC_DIMS, phoneVector, wordsToPhones } from './phonetic.js';
import { transcribe } from './speech.js';
import { TextSemantics, tokenize } from './text-semantics.js';
import { VISUAL_DIMS, visualDescriptor } from './visual-descriptor.js';
import { loadWordVectors, WORD_VECTOR_DIMS } from './word-vectors.js';

export const MULTIMODAL_ID = 'multimodal-embedding-v1';
const SEM = 0;
const SOUND = SEM + WORD_VECTOR_DIMS;
const LOOK = SOUND + PHONETIC_DIMS;
const BIAS = LOOK + VISUAL_DIMS;
export const MULTIMODAL_DIMS = BIAS + 1;

/** Shares of each block's squared length per modality (they sum to 1). */
const TEXT_SHARES = { sem: 0.6, sound: 0.4 };
const IMAGE_SHARES = { sem: 0.5, look: 0.5 };
const BIAS_VALUE = 0.01;
/** Detections below this confidence are noise for retrieval. */
const MIN_CONFIDENCE = 0.3;
const MODELS_READY_WAIT_MS = 30_000;
/** Audio is billed at 10 tokens per second (docs/api.md, "Usage"). */
const AUDIO_TOKENS_PER_S = 10;

export interface MultimodalOptions {
  modelsDir: string;
  /** The runtime the models run on: its queue depth bounds the OCR queue, its sessions how many images it reads at once. */
  runtime: Pick<InferenceRuntime, 'queueDepth' | 'sessions'>;
  /** The detector and OCR. */
  taskModels: TaskModels;
  log: Logger;
  /** Read text in images with PP-OCR (default true). */
  ocr?: boolean;
}

export class MultimodalEmbedder implements Embedder {
  readonly info: EmbeddingModelInfo = {
    id: MULTIMODAL_ID,
    name: 'Multimodal embedding v1 (GloVe words, COCO detector, PP-OCR, pocketsphinx)',
    types: ['image', 'text', 'audio'],
    dimensions: MULTIMODAL_DIMS,
    metric: 'COSINE',
  };
  private semantics: Promise<TextSemantics> | null = null;
  private readonly ocrQueue: ModelQueue<RgbImage, string>;
  /** Images being decoded and embedded (admit; a search's query or an index request's item): two a session,
   * the in-process pipeline's best. */
  private readonly images: ModelQueue<() => Promise<unknown>, unknown>;

  constructor(private readonly opts: MultimodalOptions) {
    // Two images a session at once (ocrPagesInFlight, as the OCR endpoint): one image's runs alone leave the
    // narrow sessions idle.
    this.ocrQueue = new ModelQueue(
      { name: 'embedding ocr', depth: opts.runtime.queueDepth, concurrency: ocrPagesInFlight(opts.runtime.sessions) },
      async ([img]) => [(await opts.taskModels.ocrImage(img!)).text],
    );
    this.images = new ModelQueue(
      { name: 'embedding image', depth: opts.runtime.queueDepth, concurrency: 2 * opts.runtime.sessions },
      async ([work]) => [await work!()],
    );
  }

  admit<T>(kind: Modality, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return kind === 'image' ? (this.images.submit(work, signal) as Promise<T>) : work();
  }

  private text(): Promise<TextSemantics> {
    this.semantics ??= loadWordVectors(this.opts.modelsDir).then((w) => new TextSemantics(w));
    this.semantics.catch(() => {
      this.semantics = null;
    });
    return this.semantics;
  }

  private detector(): Promise<Detector> {
    return this.opts.taskModels.readyDetector(MODELS_READY_WAIT_MS);
  }

  async checkRoom(kind: Modality): Promise<void> {
    if (kind !== 'image') return;
    this.images.checkRoom();
    (await this.detector()).handle.checkRoom();
    if (this.opts.ocr !== false) this.ocrQueue.checkRoom();
  }

  async embed(input: EmbedInput, signal?: AbortSignal): Promise<Embedding> {
    const sem = await this.text();
    const out = new Float32Array(MULTIMODAL_DIMS);
    out[BIAS] = BIAS_VALUE;
    if (input.kind === 'text') {
      const tokens = tokenize(input.text);
      place(out, SEM, sem.embed(input.text), Math.sqrt(TEXT_SHARES.sem));
      place(out, SOUND, phoneVector(wordsToPhones(tokens)), Math.sqrt(TEXT_SHARES.sound));
      return { vector: normalize(out), usage: { input_tokens: await textTokens(input.text) } };
    }
    if (input.kind === 'audio') {
      const t = await transcribe(input.bytes, input.param, signal);
      const heard = phoneVector(t.phones);
      const said = phoneVector(wordsToPhones(t.words));
      const sound = new Float32Array(PHONETIC_DIMS);
      for (let i = 0; i < PHONETIC_DIMS; i++) sound[i] = heard[i]! + said[i]!;
      place(out, SEM, sem.embed(t.words.join(' ')), Math.sqrt(TEXT_SHARES.sem));
      place(out, SOUND, sound, Math.sqrt(TEXT_SHARES.sound));
      const transcript = t.words.join(' ');
      return {
        vector: normalize(out),
        usage: { input_tokens: Math.max(1, Math.ceil(t.seconds * AUDIO_TOKENS_PER_S)) },
        transcript,
      };
    }
    const img = input.image;
    // Every branch ends before this settles: the pixels may be a pool's, given back when it has.
    const [seen, look] = await allSettled([this.see(img, signal), visualDescriptor(img)] as const);
    place(out, SEM, imageSemantics(sem, seen), Math.sqrt(IMAGE_SHARES.sem));
    place(out, LOOK, look, Math.sqrt(IMAGE_SHARES.look));
    return {
      vector: normalize(out),
      usage: { input_tokens: imageTokens(img.width, img.height, autoDetail(img.width, img.height)) },
    };
  }

  private async see(img: LoadedImage, signal?: AbortSignal) {
    const rgb: RgbImage = { data: img.data, width: img.width, height: img.height, channels: 3 };
    const det = await this.detector();
    const [objects, ocrText] = await allSettled([
      det.detect(rgb, { confidence_threshold: MIN_CONFIDENCE, signal }),
      this.opts.ocr === false ? Promise.resolve('') : this.ocrQueue.submit(rgb, signal),
    ] as const);
    const m = 0.15;
    const colour = dominantColor(rgb, [img.width * m, img.height * m, img.width * (1 - m), img.height * (1 - m)]);
    return { objects, width: img.width, height: img.height, colour, ocrText };
  }
}
