// The embedding models this server offers (GET /v1/vectors/models), by id. Collections embed with the model
// chosen at creation; an id that is not here is a 400 at creation.
import type { Services } from '../services.js';
import type { Embedder } from './embedders/embedder.js';
import { MULTIMODAL_ID, MultimodalEmbedder } from './embedders/multimodal.js';
import { vectorsSettingsFromEnv } from './vectors-config.js';

export const DEFAULT_EMBEDDING_MODEL = MULTIMODAL_ID;

export class EmbeddingModels {
  private readonly byId = new Map<string, Embedder>();

  constructor(s: Services) {
    const mm = new MultimodalEmbedder({
      modelsDir: s.config.modelsDir, models: s.models, log: s.log.child({ component: 'embedding' }),
      // PP-OCR on every image doubles indexing time and did not help on photos (eval retrieval); opt in.
      ocr: vectorsSettingsFromEnv().ocr,
    });
    this.byId.set(mm.info.id, mm);
  }

  get(id: string): Embedder | undefined {
    return this.byId.get(id);
  }

  list(): Embedder[] {
    return [...this.byId.values()];
  }
}
