// Every model the server answers with, for GET /v1/models (docs/models.md, "Listing models"). The parts that run models
// say what they serve (vision: detectors, OCR, describe; vectors: embedding models) by adding a source at
// start; this layer only gathers them, so no part has to know another's models. Runtime facts about a model
// (loaded, memory, request counts, latency) come from state providers added the same way: each returns
// fields merged into the model's entry.

/** One entry of GET /v1/models. */
export interface ServedModel {
  id: string;
  object: 'model';
  /** What the model answers: detect, ocr, describe or embed. */
  task: 'detect' | 'ocr' | 'describe' | 'embed';
  /** The default for its task (what a request without `model` runs). */
  default: boolean;
  /** builtin, or bring-your-own (a manifest under <data-dir>/manifests), or external (a configured VLM). */
  source: 'builtin' | 'bring-your-own' | 'external';
  description?: string;
  /** Embedding models: the content types they embed. */
  types?: string[];
  /** Detectors: how many classes they name, and the names. */
  labels_count?: number;
  labels?: string[];
  /** Detectors: the model input [width, height] and its output layout. */
  input_size?: [number, number];
  layout?: string;
  /** Why a bring-your-own model is not usable (its file failed to prepare or load); absent when it is. */
  error?: string;
  [state: string]: unknown;
}

/** A part's served models of one task. */
export interface CatalogueSource {
  task: ServedModel['task'];
  list(): Promise<ServedModel[]> | ServedModel[];
}

/** Runtime state of a model (loaded, memory, requests, latency): fields merged into its entry. */
export type ModelStateProvider = (id: string) => Record<string, unknown> | undefined;

export class ModelCatalogue {
  private readonly sources: CatalogueSource[] = [];
  private readonly stateProviders: ModelStateProvider[] = [];

  add(source: CatalogueSource): void {
    this.sources.push(source);
  }

  /** Plugs in runtime state: each provider's fields are added to every entry it knows. */
  addState(provider: ModelStateProvider): void {
    this.stateProviders.push(provider);
  }

  /** Every served model, task by task in the order the sources were added. */
  async list(): Promise<ServedModel[]> {
    const lists = await Promise.all(this.sources.map((s) => s.list()));
    return lists.flat().map((m) => this.withState(m));
  }

  /** One model by id (the first source that serves it), or undefined. */
  async get(id: string): Promise<ServedModel | undefined> {
    return (await this.list()).find((m) => m.id === id);
  }

  private withState(m: ServedModel): ServedModel {
    let out = m;
    for (const p of this.stateProviders) {
      const extra = p(m.id);
      if (extra) out = { ...out, ...extra };
    }
    return out;
  }
}
