// /v1/vectors/* (docs/api.md, "Vectors"): thin handlers over CollectionStore (database),
// IndexManager (USearch) and the embedding models. Writes go to the database first, then the index, inside
// the collection's lock; media bytes go to the blob store before the database row that points at them.
import { defineRoute, type RequestContext, type RouteDef } from '../http/route.js';
import type { Services } from '../services.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import type { Embedder, Embedding } from './embedders/embedder.js';
import type { CollectionStore, Collection, StoredItem } from './collection-store.js';
import type { IndexManager } from './index-manager.js';
import { rescore } from './rescore.js';
import { DEFAULT_EMBEDDING_MODEL, type EmbeddingModels } from './embedding-models.js';
import { loadContent, parseContent, type LoadedContent, type ParsedContent } from './item-input.js';
import {
  CollectionOut, CreateCollectionBody, DeleteItemsBody, IndexBody, ItemOut, ItemsQuery, ModelOut, SearchBody, SearchResultOut, UsageOut,
} from './schemas.js';
import { z } from 'zod';

/** Index requests carry up to 100 media items: a larger body limit than other JSON routes. */
const INDEX_BODY_LIMIT = 128 * 1024 * 1024;
/** Items embedded at once per request (detector and recogniser queues batch across them). */
const EMBED_CONCURRENCY = 4;

export interface VectorsDeps { s: Services; store: CollectionStore; index: IndexManager; models: EmbeddingModels }

const blobPrefix = (collectionId: string) => `vectors/${collectionId}/`;

async function mapLimit<T, R>(xs: T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, xs.length) }, async () => {
    while (next < xs.length) {
      const i = next++;
      out[i] = await fn(xs[i]!, i);
    }
  }));
  return out;
}

export function vectorsRoutes({ s, store, index, models }: VectorsDeps): RouteDef[] {
  const tags = ['vectors'];
  const errorsDoc = {
    400: { description: "Invalid request, item content, image or audio, or a modality the collection's model does not embed (invalid_request_error)" },
    404: { description: 'No such collection in this project (not_found_error)' },
  };

  const collection = async (ctx: RequestContext): Promise<Collection> => {
    const c = await store.get(ctx.principal.projectId, ctx.params.id!);
    if (!c) throw errors.notFound('collection', ctx.params.id);
    return c;
  };
  const embedderOf = async (c: Collection): Promise<Embedder> => {
    const e = await models.get(c.model_id);
    if (!e) throw errors.invalidParam('model_id', `The collection's embedding model ${c.model_id} is not installed on this server`);
    return e;
  };
  /** Before any fetch or decode: content the collection's model cannot embed is a 400 naming the field. */
  const checkModality = (e: Embedder, c: ParsedContent, prefix: string) => {
    if (e.info.types.includes(c.kind)) return;
    const param = c.kind === 'image' ? c.input.param : c.kind === 'audio' ? c.param : `${prefix}text`;
    throw errors.unsupportedModality(param, e.info.id, c.kind, e.info.types);
  };
  const publicCollection = ({ change_seq: _, ...c }: Collection) => c;
  const contentUrl = (it: StoredItem) => (it.blob_key ? s.presign(it.blob_key) : null);
  const itemOut = (it: StoredItem) => ({
    id: it.id, content_type: it.content_type, ...(it.text !== null ? { text: it.text } : {}), metadata: it.metadata,
    content_url: contentUrl(it), created_at: it.created_at,
  });
  const embed = async (ctx: RequestContext, e: Embedder, c: LoadedContent): Promise<Embedding> => {
    const r = await e.embed(c.embed, ctx.signal);
    if (r.transcript !== undefined) ctx.log.debug({ transcript: r.transcript }, 'audio transcript');
    return r;
  };
  const bill = (ctx: RequestContext, endpoint: string, model: string, inputTokens: number, started: number) =>
    s.usage.recordAfterReply({ projectId: ctx.principal.projectId, keyId: ctx.principal.keyId, endpoint, model, inputTokens, ms: performance.now() - started });

  return [
    defineRoute({
      method: 'GET', path: '/v1/vectors/models', auth: 'key', tags, noBody: true, summary: 'List embedding models',
      responses: { 200: { description: 'Models', schema: z.object({ models: z.array(ModelOut) }) } },
      handler: async () => ({ json: { models: models.list().map((m) => m.info) } }),
    }),
    defineRoute({
      method: 'POST', path: '/v1/vectors/collections', auth: 'key', tags, body: CreateCollectionBody, summary: 'Create a collection',
      responses: { 201: { description: 'Created', schema: CollectionOut }, 400: errorsDoc[400], 409: { description: 'A collection of that name exists in the project (conflict_error)' } },
      handler: async (ctx: RequestContext<CreateCollectionBody>) => {
        const modelId = ctx.body.model_id ?? DEFAULT_EMBEDDING_MODEL;
        const e = await models.get(modelId);
        if (!e) throw errors.invalidParam('model_id', `Expected an installed embedding model id (${models.list().map((m) => m.info.id).join(', ')}) for model_id but received ${JSON.stringify(modelId)}`);
        const c = await store.create(ctx.principal.projectId, {
          name: ctx.body.name, description: ctx.body.description ?? null, model_id: modelId, dimensions: e.info.dimensions, metric: e.info.metric,
        });
        if (!c) throw errors.collectionExists(ctx.body.name);
        return { status: 201, json: publicCollection(c) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/vectors/collections', auth: 'key', tags, noBody: true, summary: "List the project's collections",
      responses: { 200: { description: 'Collections, newest first', schema: z.object({ object: z.literal('list'), data: z.array(CollectionOut) }) } },
      handler: async (ctx) => ({ json: { object: 'list', data: (await store.list(ctx.principal.projectId)).map(publicCollection) } }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/vectors/collections/:id', auth: 'key', tags, noBody: true, summary: 'Collection details',
      responses: { 200: { description: 'Collection', schema: CollectionOut }, 404: errorsDoc[404] },
      handler: async (ctx) => ({ json: publicCollection(await collection(ctx)) }),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/vectors/collections/:id', auth: 'key', tags, noBody: true, summary: 'Delete a collection with its items, vectors, index and files',
      responses: { 200: { description: 'Deleted', schema: z.object({ id: z.string(), object: z.literal('vectors.collection'), deleted: z.literal(true) }) }, 404: errorsDoc[404] },
      handler: async (ctx) => {
        const id = ctx.params.id!;
        const gone = await index.lock.run(id, async () => {
          if (!(await store.delete(ctx.principal.projectId, id))) return false;
          await index.drop(id);
          return true;
        });
        if (!gone) throw errors.notFound('collection', id);
        await s.blobs.deletePrefix(blobPrefix(id));
        return { json: { id, object: 'vectors.collection', deleted: true } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/vectors/collections/:id/index', auth: 'key', tags, body: IndexBody, bodyLimit: INDEX_BODY_LIMIT,
      summary: 'Embed and index 1-100 items (each exactly one of image, image_base64, text, audio)',
      responses: {
        200: { description: 'Indexed', schema: z.object({ indexed: z.number(), ids: z.array(z.string()), model: z.string(), usage: UsageOut }) },
        ...errorsDoc, 413: { description: 'Body, image or audio over its limit (payload_too_large)' }, 503: { description: 'Models not ready or queue full (overloaded_error)' },
      },
      handler: async (ctx: RequestContext<IndexBody>) => {
        const started = performance.now();
        const parsed = ctx.body.items.map((it, i) => ({ content: parseContent(it, `items[${i}].`), metadata: it.metadata ?? {} }));
        const c = await collection(ctx);
        const e = await embedderOf(c);
        parsed.forEach((p, i) => checkModality(e, p.content, `items[${i}].`));
        const allowPrivate = s.config.allowPrivateUrls;
        const loaded = await mapLimit(parsed, EMBED_CONCURRENCY, async (p) => {
          const content = await loadContent(p.content, { signal: ctx.signal, allowPrivate });
          return { content, embedding: await embed(ctx, e, content) };
        });
        const ids = parsed.map(() => newId('item'));
        const blobKeys = loaded.map((l, i) => (l.content.blob ? `${blobPrefix(c.id)}${ids[i]}.${l.content.blob.ext}` : null));
        const written: string[] = [];
        try {
          await Promise.all(loaded.map(async (l, i) => {
            if (!l.content.blob) return;
            await s.blobs.put(blobKeys[i]!, l.content.blob.bytes, l.content.blob.mime);
            written.push(blobKeys[i]!);
          }));
          const items = loaded.map((l, i) => ({
            id: ids[i]!, content_type: l.content.content_type, text: l.content.text, blob_key: blobKeys[i]!, metadata: parsed[i]!.metadata, vector: l.embedding.vector,
          }));
          const ok = await index.lock.run(c.id, async () => {
            const w = await store.addItems(ctx.principal.projectId, c.id, items);
            if (!w) return false;
            await index.applyAdd(c.id, c.dimensions, w.changeSeq, w.keys, items.map((it) => it.vector));
            return true;
          });
          if (!ok) throw errors.notFound('collection', c.id);
        } catch (err) {
          await Promise.all(written.map((k) => s.blobs.delete(k).catch(() => false)));
          throw err;
        }
        const usage = { input_tokens: loaded.reduce((n, l) => n + l.embedding.usage.input_tokens, 0) };
        bill(ctx, '/v1/vectors/collections/:id/index', e.info.id, usage.input_tokens, started);
        return { json: { indexed: ids.length, ids, model: e.info.id, usage } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/vectors/collections/:id/items', auth: 'key', tags, noBody: true, query: ItemsQuery,
      summary: 'List items (limit 1-100, default 20; offset), oldest first, with presigned content URLs for media',
      responses: {
        200: { description: 'Items', schema: z.object({ object: z.literal('list'), data: z.array(ItemOut), total: z.number(), limit: z.number(), offset: z.number(), has_more: z.boolean() }) },
        ...errorsDoc,
      },
      handler: async (ctx: RequestContext<unknown, ItemsQuery>) => {
        const c = await collection(ctx);
        const limit = ctx.query.limit ?? 20;
        const offset = ctx.query.offset ?? 0;
        const items = await store.listItems(c.id, limit, offset);
        return { json: { object: 'list', data: items.map(itemOut), total: c.item_count, limit, offset, has_more: offset + items.length < c.item_count } };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/vectors/collections/:id/items', auth: 'key', tags, body: DeleteItemsBody, summary: 'Delete items by id',
      responses: { 200: { description: 'Deleted count and the ids that were not found', schema: z.object({ deleted: z.number(), not_found: z.array(z.string()) }) }, ...errorsDoc },
      handler: async (ctx: RequestContext<DeleteItemsBody>) => {
        const c = await collection(ctx);
        const ids = [...new Set(ctx.body.ids)];
        const r = await index.lock.run(c.id, async () => {
          const d = await store.deleteItems(ctx.principal.projectId, c.id, ids);
          if (d) await index.applyDelete(c.id, c.dimensions, d.changeSeq, d.deleted.map((x) => x.key));
          return d;
        });
        if (!r) throw errors.notFound('collection', c.id);
        await Promise.all(r.deleted.filter((x) => x.blob_key).map((x) => s.blobs.delete(x.blob_key!).catch(() => false)));
        const gone = new Set(r.deleted.map((x) => x.id));
        return { json: { deleted: r.deleted.length, not_found: ids.filter((id) => !gone.has(id)) } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/vectors/collections/:id/search', auth: 'key', tags, body: SearchBody,
      summary: 'Nearest items to a query of any modality (exactly one of image, image_base64, text, audio)',
      responses: {
        200: { description: 'Results, best first', schema: z.object({ results: z.array(SearchResultOut), model: z.string(), usage: UsageOut }) },
        ...errorsDoc, 503: { description: 'Models not ready or queue full (overloaded_error)' },
      },
      handler: async (ctx: RequestContext<SearchBody>) => {
        const started = performance.now();
        const content = parseContent(ctx.body, '');
        const c = await collection(ctx);
        const e = await embedderOf(c);
        checkModality(e, content, '');
        const topK = ctx.body.top_k ?? 10;
        const threshold = ctx.body.threshold ?? -1;
        const loaded = await loadContent(content, { signal: ctx.signal, allowPrivate: s.config.allowPrivateUrls });
        const q = await embed(ctx, e, loaded);
        const idx = await index.current(c.id, c.dimensions, c.change_seq);
        // The 8-bit index proposes candidates; their exact cosine over the stored float32 vectors ranks them. A
        // key without a row was deleted (on this node after the lookup, or on another): never returned.
        const keys = index.candidates(idx, q.vector, topK);
        const rows = await store.itemsByKeys(c.id, keys);
        const hits = rescore(q.vector, keys, (k) => rows.get(k)?.vector, topK);
        const results = [];
        for (const h of hits) {
          const it = rows.get(h.key)!;
          const score = Math.round(Math.max(-1, Math.min(1, h.score)) * 1e6) / 1e6;
          if (score < threshold) continue;
          results.push({ id: it.id, score, content_type: it.content_type, ...(it.text !== null ? { text: it.text } : {}), metadata: it.metadata, content_url: contentUrl(it) });
          if (results.length === topK) break;
        }
        bill(ctx, '/v1/vectors/collections/:id/search', e.info.id, q.usage.input_tokens, started);
        return { json: { results, model: e.info.id, usage: q.usage } };
      },
    }),
  ];
}
