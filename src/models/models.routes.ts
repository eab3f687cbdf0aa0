// GET /v1/models and /v1/models/:id (docs/models.md, "Listing models"): every model the server answers with, in the
// OpenAI list shape, gathered from the parts that run them (model-catalogue.ts). GET
// /v1/vectors/models keeps its own shape beside it.
import { z } from 'zod';
import { errors } from '../base/errors.js';
import { BatchSizesSetting, WarmupSetting } from '../inference/manifest.js';
import type { ModelCatalogue } from './model-catalogue.js';
import { defineRoute, type RouteDef } from '../http/route.js';

/** A model's serving state in this process (runtime.ts ModelState). */
export const ModelServingOut = z.object({
  state: z.enum(['unloaded', 'loading', 'loaded']),
  providers: z.array(z.string()).nullable().meta({ description: 'Providers the loaded session runs on' }),
  devices: z
    .array(z.number().int())
    .nullable()
    .meta({ description: 'GPUs (CUDA device ordinals) its loaded sessions run on; null when none runs on a GPU' }),
  engine: z
    .object({
      kind: z.enum(['binding', 'native']),
      cuda_graphs: z.object({ on: z.boolean(), note: z.string().optional() }).nullable().meta({
        description: 'Asked for (native engine on cuda): whether its sessions replay CUDA graphs, and why not',
      }),
      pinned_inputs: z.boolean().nullable().meta({
        description:
          'Native engine: whether its inputs are copied into page-locked host memory, which a GPU reads directly (true on a GPU provider with the CUDA runtime); null on the binding',
      }),
    })
    .nullable()
    .meta({
      description:
        "What runs the loaded session: onnxruntime-node's binding or the native engine (SIGHTFLOW_INFERENCE_ENGINE); null when none is loaded",
    }),
  sessions: z
    .object({ loaded: z.number().int(), max: z.number().int() })
    .nullable()
    .meta({ description: 'Sessions loaded now, and the most that run at once' }),
  batch: z
    .object({
      max_size: z.number().int(),
      max_delay_ms: z.number(),
      sizes: z.array(z.number().int()).nullable().meta({
        description:
          'Batch sizes its sessions run: a batch is padded with blank images up to the next (null: every size, no padding)',
      }),
    })
    .nullable()
    .meta({
      description:
        "Dynamic batching in force: most items a call, longest wait for company (a detector's rises once its graph took a batch axis)",
    }),
  warmup: z
    .union([
      z.object({ batch_sizes: z.array(z.number().int()), ms: z.array(z.number()) }),
      z.object({ skipped: z.string() }),
    ])
    .nullable()
    .meta({
      description:
        'The loaded session’s warm-up: the batch sizes it ran on blank images as it loaded, in order, and ms each (or why it was skipped); null: none',
    }),
  memory_bytes: z
    .number()
    .nullable()
    .meta({ description: 'Process memory growth while it loaded, at least the size of its weights (approximate)' }),
  loaded_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  requests: z.number().int(),
  errors: z.number().int(),
  p50_ms: z.number().nullable().meta({ description: 'Median latency of the last 256 runs, queue wait included' }),
  queue_depth: z.number().int(),
  pending: z.number().int(),
  idle_unload_s: z.number(),
  unloads: z.number().int(),
});

/** A registered model's serving settings (its manifest's runtime block; null: the server's default). */
export const ModelSettingsOut = z.object({
  preload: z.boolean(),
  idle_unload_s: z.number().nullable(),
  providers: z.array(z.string()).nullable(),
  queue_depth: z.number().nullable(),
  devices: z.array(z.number().int()).nullable().meta({ description: 'GPUs its sessions run on (null: the server’s)' }),
  sessions: z.number().int().nullable().meta({ description: 'Most sessions that run at once (null: the server’s)' }),
  max_batch_size: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'A detector’s most images a call (null: the server’s)' }),
  max_batch_delay_ms: z
    .number()
    .nullable()
    .meta({ description: 'A detector’s longest wait for company, ms (null: the server’s)' }),
  batch_sizes: BatchSizesSetting.nullable().meta({
    description: 'A batched model’s batch sizes, padded up to the next (null: the server’s)',
  }),
  warmup: WarmupSetting.nullable().meta({
    description: 'Whether the model’s sessions warm up as they load (null: the server’s)',
  }),
});

export const ServedModelOut = z
  .looseObject({
    id: z.string().meta({ description: 'What a request names in `model` (or a collection in model_id)' }),
    object: z.literal('model'),
    task: z.enum(['detect', 'ocr', 'describe', 'embed']).meta({ description: 'What the model answers' }),
    default: z.boolean().meta({ description: 'Whether a request without `model` runs it' }),
    source: z
      .enum(['builtin', 'bring-your-own', 'external'])
      .meta({ description: 'Built in, a manifest under <data-dir>/manifests, or a configured VLM' }),
    description: z.string().optional(),
    types: z.array(z.string()).optional().meta({ description: 'Embedding models: the content types they embed' }),
    labels_count: z.number().int().optional().meta({ description: 'Detectors: how many classes they name' }),
    labels: z.array(z.string()).optional().meta({ description: 'Detectors: the class names `classes` accepts' }),
    input_size: z
      .tuple([z.number().int(), z.number().int()])
      .optional()
      .meta({ description: 'Detectors: model input [width, height]' }),
    layout: z
      .string()
      .optional()
      .meta({ description: 'Detectors: output layout (yolov8, yolov5, yolox, rtdetr, xyxy-score-class, ...)' }),
    error: z.string().optional().meta({ description: 'Why a bring-your-own model cannot run (absent when it can)' }),
    serving: ModelServingOut.optional().meta({
      description: 'Registered models: loaded or not, memory, requests, p50 latency',
    }),
    settings: ModelSettingsOut.optional(),
    prepared: z.boolean().optional().meta({ description: 'Registered models: whether its ONNX file is in place' }),
    sha256: z.string().nullable().optional(),
    origin: z
      .string()
      .nullable()
      .optional()
      .meta({ description: 'Added models: the URL, hub reference or file it came from' }),
    added_at: z.string().nullable().optional(),
  })
  .meta({ id: 'Model', description: 'A served model; runtime state fields may follow' });

export function modelsRoutes(catalogue: ModelCatalogue): RouteDef[] {
  const tags = ['models'];
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/models',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'List every served model (detect, ocr, describe, embed)',
      responses: {
        200: { description: 'Models', schema: z.object({ object: z.literal('list'), data: z.array(ServedModelOut) }) },
      },
      handler: async () => ({ json: { object: 'list', data: await catalogue.list() } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/models/:id',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'One served model',
      responses: {
        200: { description: 'Model', schema: ServedModelOut },
        404: { description: 'No such model (not_found_error)' },
      },
      handler: async (ctx) => {
        const m = await catalogue.get(ctx.params.id!);
        if (!m) throw errors.notFound('model', ctx.params.id);
        return { json: m };
      },
    }),
  ];
}
