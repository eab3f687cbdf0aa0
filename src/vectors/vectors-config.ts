// Vectors settings from the environment (README "Configuration").
import { z } from 'zod';
import { parseEnv } from '../config.js';

export interface VectorsSettings {
  /** Read text in images with PP-OCR for multimodal-embedding-v1 (off: it doubled indexing time and did not help on photos). */
  ocr: boolean;
}

const bool = z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1');
const EnvSchema = z.object({ SIGHTFLOW_VECTORS_OCR: bool.default(false) });

export function vectorsSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): VectorsSettings {
  const e = parseEnv(EnvSchema, env);
  return { ocr: e.SIGHTFLOW_VECTORS_OCR };
}
