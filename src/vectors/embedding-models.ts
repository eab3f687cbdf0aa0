// The embedding models this server offers (GET /v1/vectors/models), by id: the built-in multimodal model
// plus every bring-your-own CLIP manifest. Collections embed with the model chosen at creation; an id that
// is not here, or whose model failed to load, is a 400 at creation. A CLIP model is listed once it has
// loaded (its dimensions come from the model); /readyz waits for that.
import type { Services } from '../services/services.js';
import type { Embedder } from './embedders/embedder.js';
import { ClipEmbedder } from './embedders/clip.js';
import { MULTIMODAL_ID, MultimodalEmbedder } from './embedders/multimodal.js';

export const DEFAULT_EMBEDDING_MODEL = MULTIMODAL_ID;

export class EmbeddingModels {
  private readonly byId = new Map<string, Embedder>();
  private readonly clip: ClipEmbedder[] = [];

  constructor(s: Services) {
    const log = s.log.child({ component: 'embedding' });
    const mm = new MultimodalEmbedder({
      modelsDir: s.config.modelsDir,
      runtime: s.models.runtime,
      taskModels: s.taskModels,
      log,
      // PP-OCR on every image doubles indexing time and did not help on photos (eval retrieval); opt in.
      ocr: s.config.vectors.ocr,
    });
    this.byId.set(mm.info.id, mm);
    for (const c of s.models.registry.clip) {
      if (this.byId.has(c.manifest.id)) {
        log.error(
          { manifest: c.manifestPath },
          `model manifest ${c.manifestPath} skipped: embedding model id ${c.manifest.id} is taken`,
        );
        continue;
      }
      const e = new ClipEmbedder(c, s.models, log);
      this.byId.set(c.manifest.id, e);
      this.clip.push(e);
    }
    s.readiness.set('embedding-models', () => this.clip.every((e) => e.status !== 'loading'));
  }

  /** Loads the bring-your-own models in the background (the server does not wait). */
  start(): void {
    for (const e of this.clip) void e.start();
  }

  /** The model for an id once it is usable; undefined when unknown or failed; 503 while still loading. */
  async get(id: string): Promise<Embedder | undefined> {
    const e = this.byId.get(id);
    if (e instanceof ClipEmbedder) {
      await e.whenReady().catch((err) => {
        if (e.status === 'loading') throw err;
      });
      if (e.status !== 'ready') return undefined;
    }
    return e;
  }

  /** The models usable now (a CLIP model still loading or failed is left out). */
  list(): Embedder[] {
    return [...this.byId.values()].filter((e) => !(e instanceof ClipEmbedder) || e.status === 'ready');
  }
}
