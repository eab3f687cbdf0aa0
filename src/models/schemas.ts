// Shapes of the model management routes (admin API); the serving state is GET /v1/models/:id's.
import { z } from 'zod';
import { ModelServingOut, ModelSettingsOut } from './models.routes.js';
import { BatchSizesSetting, WarmupSetting } from '../inference/manifest.js';

const Providers = z.array(z.enum(['tensorrt', 'cuda', 'cpu'])).min(1);

/** A model's serving settings as the admin API takes them (the manifest's runtime block, in snake_case). */
const SettingsShape = {
  preload: z.boolean().meta({ description: 'Load at start instead of on first use' }),
  idle_unload_s: z.number().min(0).meta({ description: 'Unload after this many idle seconds (0: never)' }),
  providers: Providers.meta({
    description: 'Execution providers in order; missing ones fall back to cpu with a warning',
  }),
  queue_depth: z.number().int().min(1).max(10_000).meta({ description: 'Waiting requests before 503' }),
  sessions: z
    .number()
    .int()
    .min(1)
    .max(64)
    .meta({ description: 'Most sessions of the model that run at once; default SIGHTFLOW_INFERENCE_SESSIONS' }),
  max_batch_size: z
    .number()
    .int()
    .min(1)
    .max(256)
    .meta({ description: "A detector's dynamic batching: most images a call; default the server's" }),
  max_batch_delay_ms: z
    .number()
    .min(0)
    .max(1000)
    .meta({ description: "A detector's dynamic batching: longest wait for company, ms; default the server's" }),
  batch_sizes: BatchSizesSetting.meta({
    description:
      "A batched model's batch sizes: a batch is padded with blank inputs up to the next listed size (auto: powers of two on a GPU, every size on the CPU; all: no padding); default the server's",
  }),
  warmup: WarmupSetting.meta({
    description:
      "Whether the model's sessions run their batch sizes once on blank inputs as they load (auto: on a GPU provider); default the server's",
  }),
  devices: z.array(z.number().int().min(0).max(255)).min(1).max(256).meta({
    description:
      'GPUs (CUDA device ordinals) its sessions run on, in turn, on a GPU provider; default every one the server uses',
  }),
};

/** Each optional when a model is added. */
const SettingsFields = Object.fromEntries(Object.entries(SettingsShape).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof typeof SettingsShape]: z.ZodOptional<(typeof SettingsShape)[K]>;
};

export const AddModelBody = z.strictObject({
  source: z
    .string()
    .min(1)
    .max(2000)
    .meta({ description: 'https URL of an .onnx file, or a Hugging Face reference owner/repo[@rev]:path' }),
  id: z.string().min(1).max(64).optional().meta({ description: 'Model id (default: from the file name)' }),
  task: z
    .enum(['detect', 'embed-image', 'embed-text', 'other'])
    .optional()
    .meta({ description: 'What the model does (default detect)' }),
  labels: z
    .array(z.string().min(1))
    .max(10_000)
    .optional()
    .meta({ description: 'Class names in output order (default: the COCO 80 classes)' }),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .meta({ description: 'Expected sha256 of the file; a mismatch is refused' }),
  ...SettingsFields,
});
export type AddModelBody = z.infer<typeof AddModelBody>;

/**
 * PATCH /admin/v1/models/:id: the settings to change, each optional; null puts one back to the server's
 * default. The fields left out keep what is in force.
 */
export const ModelSettingsPatch = z.strictObject(
  Object.fromEntries(Object.entries(SettingsShape).map(([k, v]) => [k, v.nullable().optional()])) as {
    [K in keyof typeof SettingsShape]: z.ZodOptional<z.ZodNullable<(typeof SettingsShape)[K]>>;
  },
);
export type ModelSettingsPatch = z.infer<typeof ModelSettingsPatch>;

export const ModelOut = z.object({
  id: z.string(),
  object: z.literal('model'),
  task: z.string(),
  description: z.string(),
  builtin: z.boolean(),
  prepared: z.boolean(),
  sha256: z.string().nullable(),
  origin: z
    .string()
    .nullable()
    .meta({ description: 'Where an added model came from (URL, hub reference or file); null for built-in ones' }),
  added_at: z.string().nullable(),
  labels: z.number().int().meta({ description: 'How many class names the manifest lists' }),
  settings: ModelSettingsOut,
  serving: ModelServingOut,
});

export const AddedModelOut = ModelOut.extend({
  check: z.object({
    summary: z.string(),
    ms: z.number(),
    objects: z.array(z.object({ class: z.string(), confidence: z.number(), bbox: z.array(z.number()) })).optional(),
  }),
});

export const ModelListOut = z.object({ object: z.literal('list'), data: z.array(ModelOut) });
export const DeletedModelOut = z.object({ id: z.string(), object: z.literal('model'), deleted: z.literal(true) });
