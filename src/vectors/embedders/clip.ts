// A bring-your-own CLIP model (manifest family "clip"): images go through CLIP preprocessing and the vision
// encoder, text through the BPE tokenizer and the text encoder; both projections are L2-normalised, so
// cosine compares them in CLIP's shared space. Both encoders run once at start (probe) on a blank image and
// an empty text: that checks names, types and feeding, and gives the dimensions from the real output.
import type { Logger } from '../../base/log.js';
import type { ModelsService } from '../../models/models-service.js';
import type { ClipModel } from '../../inference/clip-manifest.js';
import { Tensor, type Outputs } from '../../inference/runtime.js';
import type { ModelHandle } from '../../inference/model-handle.js';
import { errors } from '../../base/errors.js';
import { autoDetail, imageTokens, textTokens } from '../../usage/tokens.js';
import {
  normalize,
  type Embedder,
  type EmbedInput,
  type Embedding,
  type EmbeddingModelInfo,
  type Modality,
} from './embedder.js';
import { clipPixels, type ClipImageOptions } from './clip-preprocess.js';
import { LiveHandle } from '../../inference/live-handle.js';
import { ClipTokenizer } from './clip-tokenizer.js';

const CLIP_TYPES: Modality[] = ['image', 'text'];
/** How long a request waits for a model still being prepared or probed before it gets 503 not_ready. */
const READY_WAIT_MS = 30_000;

export type ClipState = 'loading' | 'ready' | 'failed';

export class ClipEmbedder implements Embedder {
  private dims = 0;
  private state: ClipState = 'loading';
  private failure: string | null = null;
  private tokenizer: ClipTokenizer | null = null;
  private feedMask = false;
  private probing: Promise<void> | null = null;
  private readonly visionLive: LiveHandle;
  private readonly textLive: LiveHandle;
  private readonly image: ClipImageOptions;

  constructor(
    private readonly clip: ClipModel,
    private readonly models: ModelsService,
    private readonly log: Logger,
  ) {
    this.visionLive = new LiveHandle(models.runtime, models.registry, clip.visionId);
    this.textLive = new LiveHandle(models.runtime, models.registry, clip.textId);
    const m = clip.manifest;
    this.image = { size: m.image_size, resize: m.resize ?? m.image_size, mean: m.mean, std: m.std };
  }

  /** The encoders' runtime handles in force (new ones after their settings changed). */
  private get vision(): ModelHandle {
    return this.visionLive.get();
  }
  private get text(): ModelHandle {
    return this.textLive.get();
  }

  get info(): EmbeddingModelInfo {
    const m = this.clip.manifest;
    return { id: m.id, name: m.name ?? m.id, types: CLIP_TYPES, dimensions: this.dims, metric: 'COSINE' };
  }

  get status(): ClipState {
    return this.state;
  }
  /** Why the model is unusable (state 'failed'). */
  get error(): string | null {
    return this.failure;
  }

  /** Loads and checks the model once (after the registry prepared it); settles, never rejects. */
  start(): Promise<void> {
    this.probing ??= this.probe().then(
      () => {
        this.state = 'ready';
        this.log.info(
          { model: this.info.id, dimensions: this.dims },
          `embedding model ${this.info.id} ready (${this.dims}-d)`,
        );
      },
      (e: Error) => {
        this.state = 'failed';
        this.failure = e.message;
        this.log.error(
          { model: this.info.id, manifest: this.clip.manifestPath, err: e.message },
          `embedding model ${this.info.id} is unavailable: ${e.message}`,
        );
      },
    );
    return this.probing;
  }

  /** Resolves once usable; 503 not_ready while still loading after a wait; throws if the model failed. */
  async whenReady(): Promise<void> {
    if (this.state === 'loading')
      await Promise.race([this.start(), new Promise((r) => setTimeout(r, READY_WAIT_MS).unref())]);
    if (this.state === 'loading') throw errors.notReady(`The embedding model ${this.info.id}`);
    if (this.state === 'failed') throw new Error(`embedding model ${this.info.id} is unavailable: ${this.failure}`);
  }

  private async probe(): Promise<void> {
    await this.models.ready;
    const reg = this.models.registry;
    for (const id of [this.clip.visionId, this.clip.textId]) {
      const f = reg.prepareFailure(id);
      if (f) throw new Error(f);
    }
    const m = this.clip.manifest;
    this.tokenizer = await ClipTokenizer.fromFile(this.clip.tokenizerPath, m.pad_token_id);
    const [v, t] = await Promise.all([this.vision.session(), this.text.session()]);
    const need = (what: string, kind: 'input' | 'output', name: string, names: string[]) => {
      if (!names.includes(name))
        throw new Error(
          `the ${what} encoder has no ${kind} named ${name} (it has ${names.join(', ')}); set ${what}.${kind} in the manifest`,
        );
    };
    need('vision', 'input', m.vision.input, v.inputNames);
    need('vision', 'output', m.vision.output, v.outputNames);
    need('text', 'input', m.text.input, t.inputNames);
    need('text', 'output', m.text.output, t.outputNames);
    this.feedMask = t.inputNames.includes(m.text.attention_mask);
    const blank = { data: Buffer.alloc(m.image_size * m.image_size * 3), width: m.image_size, height: m.image_size };
    const dv = (await this.runImage(blank)).length;
    const dt = (await this.runText('')).length;
    if (dv !== dt) throw new Error(`the vision encoder gives ${dv}-d embeddings but the text encoder ${dt}-d`);
    this.dims = dv;
  }

  async checkRoom(kind: Modality): Promise<void> {
    if (kind === 'image') this.vision.checkRoom();
  }

  async embed(input: EmbedInput, signal?: AbortSignal): Promise<Embedding> {
    await this.whenReady();
    if (input.kind === 'text') {
      return {
        vector: normalize(await this.runText(input.text, signal)),
        usage: { input_tokens: await textTokens(input.text) },
      };
    }
    if (input.kind === 'image') {
      const img = input.image;
      return {
        vector: normalize(await this.runImage(img, signal)),
        usage: { input_tokens: imageTokens(img.width, img.height, autoDetail(img.width, img.height)) },
      };
    }
    throw errors.unsupportedModality(input.param, this.info.id, input.kind, CLIP_TYPES);
  }

  private async runImage(
    img: { data: Buffer; width: number; height: number },
    signal?: AbortSignal,
  ): Promise<Float32Array> {
    const m = this.clip.manifest;
    const px = await clipPixels(img, this.image);
    const feeds = { [m.vision.input]: new Tensor('float32', px, [1, 3, m.image_size, m.image_size]) };
    return this.single(
      'vision',
      await this.vision.run(feeds, [m.vision.output], { signal }, { transfer: true }),
      m.vision.output,
    );
  }

  private async runText(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const m = this.clip.manifest;
    const { ids, mask } = this.tokenizer!.encode(text, m.context_length);
    const tensor = (v: number[]) =>
      m.text.dtype === 'int64'
        ? new Tensor(
            'int64',
            BigInt64Array.from(v, (x) => BigInt(x)),
            [1, v.length],
          )
        : new Tensor('int32', Int32Array.from(v), [1, v.length]);
    const feeds = { [m.text.input]: tensor(ids), ...(this.feedMask ? { [m.text.attention_mask]: tensor(mask) } : {}) };
    return this.single(
      'text',
      await this.text.run(feeds, [m.text.output], { signal }, { transfer: true }),
      m.text.output,
    );
  }

  /** The one embedding in an output of shape [1, D] (or [D]), as a fresh array. */
  private single(what: string, out: Outputs, name: string): Float32Array {
    const t = out[name];
    if (!t) throw new Error(`the ${what} encoder did not return ${name}`);
    const dims = t.dims;
    if (t.type !== 'float32' || dims.length === 0 || dims.length > 2 || (dims.length === 2 && dims[0] !== 1)) {
      throw new Error(
        `the ${what} encoder's ${name} is ${t.type} of shape [${dims.join(', ')}]; expected float32 [batch, dimensions] (the projected embedding, e.g. image_embeds / text_embeds)`,
      );
    }
    return Float32Array.from(t.data as Float32Array);
  }
}
