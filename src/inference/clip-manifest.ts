// A bring-your-own CLIP embedding model: one manifest (<data-dir>/manifests/*.json with "family": "clip")
// naming a vision encoder ONNX, a text encoder ONNX and the HF tokenizer.json beside them. The registry
// turns it into two ordinary ONNX models, `<id>.vision` and `<id>.text`, so they are prepared, checksummed,
// listed and verified like any other model; the vectors part builds the embedder from the rest.
import { isAbsolute, join, dirname } from 'node:path';
import { z } from 'zod';
import { ManifestSchema, sha256, type ModelManifest } from './manifest.js';

/** CLIP's own preprocessing (OpenAI CLIP, HF CLIPImageProcessor). */
export const CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073] as const;
export const CLIP_STD = [0.26862954, 0.26130258, 0.27577711] as const;

const Encoder = <I extends string, O extends string>(input: I, output: O) => ({
  /** The ONNX file; relative paths resolve against the manifest's folder. */
  file: z.string().min(1),
  sha256: sha256.optional(),
  input: z.string().min(1).default(input),
  output: z.string().min(1).default(output),
});

const rgb = (what: string, positive: boolean) =>
  z
    .tuple([z.number(), z.number(), z.number()], { error: `expected three numbers (R, G, B) for ${what}` })
    .refine((v) => !positive || v.every((x) => x > 0), `every ${what} value must be > 0`);

export const ClipManifestSchema = z
  .strictObject({
    // Room for the ".vision" suffix within the 64-character model id.
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,56}$/, 'lowercase letters, digits, ".", "_" or "-", at most 57 characters'),
    family: z.literal('clip'),
    /** Shown by GET /v1/vectors/models; defaults to the id. */
    name: z.string().min(1).optional(),
    description: z.string().default(''),
    vision: z.strictObject(Encoder('pixel_values', 'image_embeds')),
    text: z.strictObject({
      ...Encoder('input_ids', 'text_embeds'),
      /** Fed (1 for tokens, 0 for padding) only when the model has an input of this name. */
      attention_mask: z.string().min(1).default('attention_mask'),
      /** Element type of input_ids and the mask (HF exports use int64). */
      dtype: z.enum(['int64', 'int32']).default('int64'),
    }),
    tokenizer: z.union([z.string().min(1), z.strictObject({ file: z.string().min(1), sha256: sha256.optional() })]),
    /** Side of the square the vision encoder takes (centre crop). */
    image_size: z.number().int().min(8).max(1024).default(224),
    /** Shorter side after resizing, before the crop; defaults to image_size. */
    resize: z.number().int().min(8).max(2048).optional(),
    mean: rgb('mean', false).default([...CLIP_MEAN]),
    std: rgb('std', true).default([...CLIP_STD]),
    /** Tokens per text, start and end tokens included (longer texts are truncated). */
    context_length: z.number().int().min(3).max(4096).default(77),
    /** Padding token id; defaults to tokenizer.json's padding.pad_id, else the end-of-text token. */
    pad_token_id: z.number().int().min(0).optional(),
    /** Micro-batching of both encoders (their first input axis must be free). */
    batch: z.strictObject({ maxBatch: z.number().int().min(1), maxWaitMs: z.number().min(0) }).optional(),
  })
  .refine((m) => (m.resize ?? m.image_size) >= m.image_size, {
    message: 'resize must be at least image_size',
    path: ['resize'],
  });

export type ClipManifest = z.infer<typeof ClipManifestSchema>;

/** A CLIP model known to the registry: its manifest, and its two encoders' registry ids. */
export interface ClipModel {
  manifest: ClipManifest;
  manifestPath: string;
  visionId: string;
  textId: string;
  /** Absolute path of tokenizer.json. */
  tokenizerPath: string;
}

/** True for a parsed JSON value that declares a model family (so it is not a single-model manifest). */
export function isFamilyManifest(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'family' in raw;
}

/** The two single-model manifests a CLIP manifest stands for. */
export function clipEncoderManifests(
  m: ClipManifest,
  manifestPath: string,
): { clip: ClipModel; vision: ModelManifest; text: ModelManifest } {
  const name = m.name ?? m.id;
  const tok = typeof m.tokenizer === 'string' ? { file: m.tokenizer } : m.tokenizer;
  const s = m.image_size;
  const vision = ManifestSchema.parse({
    id: `${m.id}.vision`,
    task: 'embed-image',
    format: 'onnx',
    description: `${name}: image encoder`,
    source: { file: m.vision.file, sha256: m.vision.sha256 },
    inputs: [{ name: m.vision.input, shape: ['batch', 3, s, s], layout: 'nchw' }],
    outputs: [{ name: m.vision.output, shape: ['batch', 'dimensions'] }],
    preprocess: { resize: m.resize ?? s, crop: s, mean: m.mean, std: m.std },
    batch: m.batch,
  });
  const text = ManifestSchema.parse({
    id: `${m.id}.text`,
    task: 'embed-text',
    format: 'onnx',
    description: `${name}: text encoder`,
    // The tokenizer travels as the text encoder's extra source file: checked by prepare and verify.
    source: { file: m.text.file, sha256: m.text.sha256, files: [{ path: tok.file, sha256: tok.sha256 }] },
    inputs: [{ name: m.text.input, shape: ['batch', m.context_length], dtype: m.text.dtype }],
    outputs: [{ name: m.text.output, shape: ['batch', 'dimensions'] }],
    batch: m.batch,
  });
  const tokenizerPath = isAbsolute(tok.file) ? tok.file : join(dirname(manifestPath), tok.file);
  return { clip: { manifest: m, manifestPath, visionId: vision.id, textId: text.id, tokenizerPath }, vision, text };
}
