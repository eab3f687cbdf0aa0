// Vector collection use cases over CollectionStore (database), IndexManager (USearch) and the embedding
// models: validated input in, the answer's JSON shape out, no HTTP. Writes go to the database first, then the
// index, inside the collection's lock; media bytes go to the blob store before the database row that points
// at them. Indexing and search bill one usage-ledger row each (usage/billing.ts).
import type { Services } from '../services/services.js';
import { errors } from '../base/errors.js';
import { newId } from '../base/ids.js';
import { bill, type Caller } from '../usage/billing.js';
import type { Embedder, Embedding } from './embedders/embedder.js';
import type { CollectionStore, Collection, StoredItem } from './collection-store.js';
import type { IndexManager } from './index-manager.js';
import { rescore } from './rescore.js';
import { DEFAULT_EMBEDDING_MODEL, type EmbeddingModels } from './embedding-models.js';
import { releaseAfter, requestPixels } from '../media/pixel-pool.js';
import { fetchImageInput, type LoadImageOptions } from '../media/image-input.js';
import { contentKind, loadContent, parseContent, type LoadedContent, type ParsedContent } from './item-input.js';
import type {
  CreateCollectionBody,
  DeleteItemsBody,
  IndexBody,
  ItemsQuery,
  PatchItemBody,
  SearchBody,
} from './schemas.js';
import { matchesFilter, parseFilter } from './filter.js';
import { mergePatch } from './merge-patch.js';
import { idsMatching } from './items-by-filter.js';
import { DEFAULT_MERGE_GAP_MS, groupByVideo, groupedCandidates, momentOf } from './moment-search.js';

/** Collections whose model a search remembers (refuseIfFull); past it the oldest is forgotten. */
const KNOWN_MODELS_MAX = 10_000;

/** Items embedded at once per call (detector and recogniser queues batch across them). */
const EMBED_CONCURRENCY = 4;

/** Who a read or write runs for: the project owns the collection. */
type Owner = Pick<Caller, 'projectId'>;

const blobPrefix = (collectionId: string) => `vectors/${collectionId}/`;

async function mapLimit<T, R>(xs: T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, xs.length) }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await fn(xs[i]!, i);
      }
    }),
  );
  return out;
}

export interface VectorsDeps {
  s: Services;
  store: CollectionStore;
  index: IndexManager;
  models: EmbeddingModels;
}

export class VectorsService {
  private readonly s: Services;
  private readonly store: CollectionStore;
  private readonly index: IndexManager;
  private readonly models: EmbeddingModels;
  /** Each collection's owner and model as last read (neither ever changes): a search refuses on a full queue
   * before the query is decoded or the collection is read again (overloaded, a refusal is what most requests
   * get: it must cost next to nothing). */
  private readonly modelOf = new Map<string, { projectId: string; modelId: string }>();

  constructor(d: VectorsDeps) {
    this.s = d.s;
    this.store = d.store;
    this.index = d.index;
    this.models = d.models;
  }

  listModels() {
    return { models: this.models.list().map((m) => m.info) };
  }

  async createCollection(caller: Owner, body: CreateCollectionBody) {
    const modelId = body.model_id ?? DEFAULT_EMBEDDING_MODEL;
    const e = await this.models.get(modelId);
    if (!e)
      throw errors.invalidParam(
        'model_id',
        `Expected an installed embedding model id (${this.models
          .list()
          .map((m) => m.info.id)
          .join(', ')}) for model_id but received ${JSON.stringify(modelId)}`,
      );
    const c = await this.store.create(caller.projectId, {
      name: body.name,
      description: body.description ?? null,
      model_id: modelId,
      dimensions: e.info.dimensions,
      metric: e.info.metric,
    });
    if (!c) throw errors.collectionExists(body.name);
    return publicCollection(c);
  }

  async listCollections(caller: Owner) {
    return { object: 'list' as const, data: (await this.store.list(caller.projectId)).map(publicCollection) };
  }

  async getCollection(caller: Owner, id: string) {
    return publicCollection(await this.collection(caller, id));
  }

  async deleteCollection(caller: Owner, id: string) {
    const gone = await this.index.lock.run(id, async () => {
      if (!(await this.store.delete(caller.projectId, id))) return false;
      this.modelOf.delete(id);
      await this.index.drop(id);
      return true;
    });
    if (!gone) throw errors.notFound('collection', id);
    await this.s.blobs.deletePrefix(blobPrefix(id));
    return { id, object: 'vectors.collection' as const, deleted: true as const };
  }

  async indexItems(caller: Caller, collectionId: string, body: IndexBody) {
    const started = performance.now();
    const { s, store, index } = this;
    const parsed = body.items.map((it, i) => ({
      content: parseContent(it, `items[${i}].`),
      metadata: it.metadata ?? {},
    }));
    const firstAt = new Map<string, number>();
    body.items.forEach((it, i) => {
      if (it.id === undefined) return;
      const j = firstAt.get(it.id);
      if (j !== undefined)
        throw errors.invalidParam(
          `items[${i}].id`,
          `Expected ids unique within the request for items[${i}].id but received ${JSON.stringify(it.id)}, the id of items[${j}] too`,
        );
      firstAt.set(it.id, i);
    });
    const c = await this.collection(caller, collectionId);
    const e = await this.embedderOf(c);
    parsed.forEach((p, i) => checkModality(e, p.content, `items[${i}].`));
    if (parsed.some((p) => p.content.kind === 'image')) await e.checkRoom?.('image'); // before any image is fetched
    const load = { ...s.config.urlPolicy, signal: caller.signal };
    const loaded = await mapLimit(parsed, EMBED_CONCURRENCY, (p) =>
      inTurn(e, p.content, load, async (fetched) => {
        const content = await loadContent(fetched, load);
        return { content, embedding: await embed(caller, e, content) };
      }),
    );
    const ids = body.items.map((it) => it.id ?? newId('item'));
    // A client's id may name an item that already has a file: every write gets a file of its own, and the
    // replaced item's file is deleted once the database no longer points at it.
    const blobKeys = loaded.map((l, i) =>
      l.content.blob
        ? `${blobPrefix(c.id)}${body.items[i]!.id === undefined ? ids[i] : newId('file')}.${l.content.blob.ext}`
        : null,
    );
    let replaced: Array<{ blob_key: string | null }> = [];
    const written: string[] = [];
    try {
      await Promise.all(
        loaded.map(async (l, i) => {
          if (!l.content.blob) return;
          await s.blobs.put(blobKeys[i]!, l.content.blob.bytes, l.content.blob.mime);
          written.push(blobKeys[i]!);
        }),
      );
      const items = loaded.map((l, i) => ({
        id: ids[i]!,
        content_type: l.content.content_type,
        text: l.content.text,
        blob_key: blobKeys[i]!,
        metadata: parsed[i]!.metadata,
        vector: l.embedding.vector,
      }));
      const ok = await index.lock.run(c.id, async () => {
        const w = await store.addItems(caller.projectId, c.id, items);
        if (!w) return false;
        replaced = w.replaced;
        await index.applyAdd(
          c.id,
          c.dimensions,
          w.changeSeq,
          w.keys,
          items.map((it) => it.vector),
          items.map((it) => it.metadata),
          w.replaced.map((r) => r.key),
        );
        return true;
      });
      if (!ok) throw errors.notFound('collection', c.id);
    } catch (err) {
      await Promise.all(written.map((k) => s.blobs.delete(k).catch(() => false)));
      throw err;
    }
    await Promise.all(replaced.filter((r) => r.blob_key).map((r) => s.blobs.delete(r.blob_key!).catch(() => false)));
    const usage = { input_tokens: loaded.reduce((n, l) => n + l.embedding.usage.input_tokens, 0) };
    await bill(s.usage, caller, {
      endpoint: '/v1/vectors/collections/:id/index',
      model: e.info.id,
      inputTokens: usage.input_tokens,
      started,
    });
    return { indexed: ids.length, ids, model: e.info.id, usage };
  }

  async listItems(caller: Owner, collectionId: string, query: ItemsQuery) {
    const c = await this.collection(caller, collectionId);
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const items = await this.store.listItems(c.id, limit, offset);
    return {
      object: 'list' as const,
      data: items.map((it) => this.itemOut(it)),
      total: c.item_count,
      limit,
      offset,
      has_more: offset + items.length < c.item_count,
    };
  }

  async getItem(caller: Owner, collectionId: string, itemId: string) {
    const c = await this.collection(caller, collectionId);
    const it = await this.store.getItem(c.id, itemId);
    if (!it) throw errors.notFound('item', itemId);
    return this.itemOut(it);
  }

  /** Merges `body.metadata` into the item's metadata (JSON merge patch: null removes a key). */
  async patchItem(caller: Owner, collectionId: string, itemId: string, body: PatchItemBody) {
    const { store, index } = this;
    const c = await this.collection(caller, collectionId);
    const r = await index.lock.run(c.id, async () => {
      const u = await store.updateMetadata(caller.projectId, c.id, itemId, (old) => mergePatch(old, body.metadata));
      if (u && u !== 'missing') await index.applyMetadata(c.id, c.dimensions, u.changeSeq, u.item.key, u.item.metadata);
      return u;
    });
    if (!r) throw errors.notFound('collection', c.id);
    if (r === 'missing') throw errors.notFound('item', itemId);
    return this.itemOut(r.item);
  }

  async deleteItems(caller: Owner, collectionId: string, body: DeleteItemsBody) {
    const { s, store, index } = this;
    if (body.filter !== undefined) {
      const filter = parseFilter(body.filter);
      if (!filter)
        throw errors.invalidParam(
          'filter',
          'Expected at least one condition in filter (delete the collection to remove every item)',
        );
      const c = await this.collection(caller, collectionId);
      let deleted = 0;
      for (const chunk of await idsMatching(this.s.db, c.id, filter))
        deleted += (await this.deleteItems(caller, c.id, { ids: chunk })).deleted;
      return { deleted, not_found: [] as string[] };
    }
    const c = await this.collection(caller, collectionId);
    const ids = [...new Set(body.ids ?? [])];
    const r = await index.lock.run(c.id, async () => {
      const d = await store.deleteItems(caller.projectId, c.id, ids);
      if (d)
        await index.applyDelete(
          c.id,
          c.dimensions,
          d.changeSeq,
          d.deleted.map((x) => x.key),
        );
      return d;
    });
    if (!r) throw errors.notFound('collection', c.id);
    await Promise.all(r.deleted.filter((x) => x.blob_key).map((x) => s.blobs.delete(x.blob_key!).catch(() => false)));
    const gone = new Set(r.deleted.map((x) => x.id));
    return { deleted: r.deleted.length, not_found: ids.filter((id) => !gone.has(id)) };
  }

  search(caller: Caller, collectionId: string, body: SearchBody) {
    return this.searchItems(caller, collectionId, body, true);
  }

  /** `links`: presign each result's content_url (grouping presigns only the moments it keeps, and leaves
   * content_url as the blob key meanwhile). */
  private async searchItems(caller: Caller, collectionId: string, body: SearchBody, links: boolean) {
    const started = performance.now();
    const { s, store, index } = this;
    await this.refuseIfFull(caller, collectionId, contentKind(body));
    const content = parseContent(body, '');
    const filter = body.filter === undefined ? null : parseFilter(body.filter);
    const c = await this.collection(caller, collectionId);
    const e = await this.embedderOf(c);
    checkModality(e, content, '');
    const topK = body.top_k ?? 10;
    const threshold = body.threshold ?? -1;
    if (body.merge_gap_ms !== undefined && body.group_by === undefined)
      throw errors.invalidParam('merge_gap_ms', 'Expected group_by "video" with merge_gap_ms');
    // Grouping needs more than top_k items: the moments of top_k videos, and the segments that merge into them.
    const k = body.group_by ? groupedCandidates(topK) : topK;
    await e.checkRoom?.(content.kind); // a full queue refuses before the image is fetched and decoded
    // A query image is read only by its embedding: its pixels go back to the pool when that has settled.
    const load = { ...s.config.urlPolicy, signal: caller.signal, pixels: requestPixels };
    const q = await inTurn(e, content, load, async (fetched) => {
      const loaded = await loadContent(fetched, load);
      return loaded.embed.kind === 'image'
        ? releaseAfter(loaded.embed.image, embed(caller, e, loaded))
        : embed(caller, e, loaded);
    });
    const idx = await index.current(c.id, c.dimensions, c.change_seq);
    // The 8-bit index proposes candidates; their exact cosine over the stored float32 vectors ranks them. A
    // key without a row was deleted (on this node after the lookup, or on another): never returned.
    // A filter is applied inside the index search (IndexManager.filteredCandidates); the rows are checked
    // against it again, so metadata changed on another node since this index caught up never slips through.
    const keys = filter
      ? await index.filteredCandidates(c.id, idx, q.vector, k, filter)
      : index.candidates(idx, q.vector, k);
    const rows = await store.itemsByKeys(c.id, keys);
    const hits = rescore(
      q.vector,
      keys,
      (k) => {
        const r = rows.get(k);
        return r && (!filter || matchesFilter(filter, r.metadata)) ? r.vector : undefined;
      },
      k,
    );
    const results = [];
    for (const h of hits) {
      const it = rows.get(h.key)!;
      const score = Math.round(Math.max(-1, Math.min(1, h.score)) * 1e6) / 1e6;
      if (score < threshold) continue;
      const content_url = links ? this.contentUrl(it) : it.blob_key;
      const moment = momentOf({ id: it.id, score, metadata: it.metadata, url: content_url });
      results.push({
        id: it.id,
        score,
        content_type: it.content_type,
        ...(it.text !== null ? { text: it.text } : {}),
        metadata: it.metadata,
        content_url,
        ...(moment ? { moment } : {}),
      });
      if (results.length === k) break;
    }
    await bill(s.usage, caller, {
      endpoint: '/v1/vectors/collections/:id/search',
      model: e.info.id,
      inputTokens: q.usage.input_tokens,
      started,
    });
    return { results, model: e.info.id, usage: q.usage };
  }

  /** Search with group_by "video": the top_k videos with their merged moments (moment-search.ts). */
  async searchMoments(caller: Caller, collectionId: string, body: SearchBody) {
    const { results, model, usage } = await this.searchItems(caller, collectionId, body, false);
    const videos = groupByVideo(
      results.map((r) => ({ id: r.id, score: r.score, metadata: r.metadata, url: r.content_url })),
      body.top_k ?? 10,
      body.merge_gap_ms ?? DEFAULT_MERGE_GAP_MS,
    );
    for (const v of videos)
      for (const m of v.moments) m.thumbnail_url = m.thumbnail_url ? this.s.presign(m.thumbnail_url) : null;
    return { videos, model, usage };
  }

  private async collection(caller: Owner, id: string): Promise<Collection> {
    const c = await this.store.get(caller.projectId, id);
    if (!c) {
      this.modelOf.delete(id);
      throw errors.notFound('collection', id);
    }
    if (!this.modelOf.has(id)) {
      if (this.modelOf.size >= KNOWN_MODELS_MAX) this.modelOf.delete(this.modelOf.keys().next().value!);
      this.modelOf.set(id, { projectId: caller.projectId, modelId: c.model_id });
    }
    return c;
  }

  /** A 503 when the queue of a known collection's model for this kind is full, before anything else is
   * checked: a malformed query, or a collection deleted since (on another node), may get this 503 where its
   * next try gets the 400 or 404. */
  private async refuseIfFull(caller: Owner, id: string, kind: ParsedContent['kind'] | null): Promise<void> {
    const known = this.modelOf.get(id);
    if (!known || known.projectId !== caller.projectId || !kind || kind === 'text') return;
    const e = await this.models.get(known.modelId);
    if (e?.info.types.includes(kind)) await e.checkRoom?.(kind);
  }

  private async embedderOf(c: Collection): Promise<Embedder> {
    const e = await this.models.get(c.model_id);
    if (!e)
      throw errors.invalidParam(
        'model_id',
        `The collection's embedding model ${c.model_id} is not installed on this server`,
      );
    return e;
  }

  private contentUrl(it: StoredItem): string | null {
    return it.blob_key ? this.s.presign(it.blob_key) : null;
  }

  private itemOut(it: StoredItem) {
    return {
      id: it.id,
      content_type: it.content_type,
      ...(it.text !== null ? { text: it.text } : {}),
      metadata: it.metadata,
      content_url: this.contentUrl(it),
      created_at: it.created_at,
    };
  }
}

/** Before any fetch or decode: content the collection's model cannot embed is a 400 naming the field. */
function checkModality(e: Embedder, c: ParsedContent, prefix: string): void {
  if (e.info.types.includes(c.kind)) return;
  const param = c.kind === 'image' ? c.input.param : c.kind === 'audio' ? c.param : `${prefix}text`;
  throw errors.unsupportedModality(param, e.info.id, c.kind, e.info.types);
}

function publicCollection({ change_seq: _, ...c }: Collection) {
  return c;
}

/**
 * `work` (loading and embedding the content) in the model's turn for its kind (Embedder.admit), so content
 * waiting its turn holds no pixels. An image given by URL is fetched before it waits: a slow server holds no
 * turn.
 */
async function inTurn<T>(
  e: Embedder,
  content: ParsedContent,
  load: LoadImageOptions,
  work: (fetched: ParsedContent) => Promise<T>,
): Promise<T> {
  const fetched: ParsedContent =
    content.kind === 'image' ? { kind: 'image', input: await fetchImageInput(content.input, load) } : content;
  return e.admit ? e.admit(content.kind, () => work(fetched), load.signal) : work(fetched);
}

async function embed(caller: Caller, e: Embedder, c: LoadedContent): Promise<Embedding> {
  const r = await e.embed(c.embed, caller.signal);
  if (r.transcript !== undefined) caller.log.debug({ transcript: r.transcript }, 'audio transcript');
  return r;
}
