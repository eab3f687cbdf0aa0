// A detector model's preprocessing read from its files alone (manifest, ONNX metadata and shapes, labels), as
// Detector.create reads it, for the runtime's imagePreprocess port: a detector's graph then takes its image as
// bytes however the model first loads, a preload or the add check included, not only after a detector for it
// was made.
import { readFile } from 'node:fs/promises';
import type { ModelRegistry } from '../inference/registry.js';
import { readOnnxInfo } from '../inference/onnx-metadata.js';
import type { Uint8Preprocess } from '../inference/uint8-input.js';
import { resolveDetectorConfig } from './detector-config.js';

/** The preprocessing of the registry's detector models; undefined for models of other tasks or unknown ids. */
export function detectorPreprocess(registry: ModelRegistry): (modelId: string) => Promise<Uint8Preprocess | undefined> {
  return async (modelId) => {
    if (!registry.has(modelId)) return undefined;
    const { manifest } = registry.get(modelId);
    if (manifest.task !== 'detect') return undefined;
    const onnx = readOnnxInfo(await readFile(await registry.onnxPath(modelId)));
    return resolveDetectorConfig(manifest, onnx, await registry.labels(modelId)).pre;
  };
}
