// The check `sightflow models add` and POST /admin/v1/models run before a model is kept: a detector runs on
// the shipped sample photo (assets/astronaut.jpg) and what it found is reported, so a wrong export (input
// size, layout, class count) fails at add time, not on the first client request. Other tasks are loaded
// (which already checks the file) and their inputs and outputs reported.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../base/paths.js';
import type { ModelRegistry } from '../inference/registry.js';
import type { InferenceRuntime } from '../inference/runtime.js';
import { decodeToRgb } from '../media/image-decode.js';
import { Detector } from './detect.js';

/** What the sample run found, in words for the CLI and as data for the API. */
export interface ModelCheck {
  summary: string;
  ms: number;
  objects?: { class: string; confidence: number; bbox: number[] }[];
}

export const SAMPLE_IMAGE = join(projectRoot, 'assets', 'astronaut.jpg');

export async function checkModelOnSample(
  runtime: InferenceRuntime,
  registry: ModelRegistry,
  id: string,
): Promise<ModelCheck> {
  const t0 = performance.now();
  const { manifest } = registry.get(id);
  if (manifest.task !== 'detect') {
    const info = await runtime.register(registry.spec(id)).session();
    const shape = (m: { name: string; shape?: (number | string)[] }) => `${m.name} [${(m.shape ?? []).join(', ')}]`;
    return {
      ms: performance.now() - t0,
      summary: `loaded: inputs ${(info.inputMetadata ?? []).map(shape).join(', ')}; outputs ${info.outputMetadata.map(shape).join(', ')}`,
    };
  }
  const image = await decodeToRgb(await readFile(SAMPLE_IMAGE), 'jpeg', 'image', 100_000_000);
  const detector = await Detector.create(runtime, registry, id);
  const objects = await detector.detect(image, { confidence_threshold: 0.25 });
  const ms = performance.now() - t0;
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.class, (counts.get(o.class) ?? 0) + 1);
  const found = [...counts].map(([c, n]) => `${n} ${c}`).join(', ') || 'nothing above 0.25';
  return {
    ms,
    summary: `detected on astronaut.jpg: ${found} (${Math.round(ms)} ms)`,
    objects: objects.map((o) => ({ class: o.class, confidence: o.confidence, bbox: o.bbox })),
  };
}
