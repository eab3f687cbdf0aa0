// The vectors part's collections port (collections-port.ts): another part (the video index step)
// embeds with a collection's model and writes items the way POST .../index does, database first, then the
// index under the collection's lock, thumbnails to the blob store before the rows that point at them.
import type { Services } from '../services/services.js';
import { errors } from '../base/errors.js';
import type { CollectionItemWrite, CollectionsPort, CollectionWriter } from '../services/collections-port.js';
import type { RgbImage } from '../media/rgb-image.js';
import type { CollectionStore } from './collection-store.js';
import type { IndexManager } from './index-manager.js';
import type { EmbeddingModels } from './embedding-models.js';

export function collectionsPort(
  s: Services,
  store: CollectionStore,
  index: IndexManager | null,
  models: EmbeddingModels,
): CollectionsPort {
  return {
    async writer(projectId, collectionId, param): Promise<CollectionWriter> {
      const c = await store.get(projectId, collectionId);
      if (!c) throw errors.invalidParam(param, `No such collection in this project: ${JSON.stringify(collectionId)}`);
      const e = await models.get(c.model_id);
      if (!e)
        throw errors.invalidParam(
          param,
          `The collection's embedding model ${c.model_id} is not installed on this server`,
        );
      if (!e.info.types.includes('image')) throw errors.unsupportedModality(param, e.info.id, 'image', e.info.types);
      const prefix = `vectors/${c.id}/`;
      return {
        collectionId: c.id,
        modelId: c.model_id,
        dimensions: c.dimensions,
        embedsText: e.info.types.includes('text'),
        async embedImage(image: RgbImage, signal?: AbortSignal) {
          const data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
          return (
            await e.embed(
              {
                kind: 'image',
                image: {
                  data,
                  width: image.width,
                  height: image.height,
                  channels: 3,
                  format: 'jpeg',
                  bytes: Buffer.alloc(0),
                },
              },
              signal,
            )
          ).vector;
        },
        async embedText(text: string, signal?: AbortSignal) {
          return (await e.embed({ kind: 'text', text }, signal)).vector;
        },
        async add(items: CollectionItemWrite[]) {
          if (items.length === 0) return;
          const keys = items.map((it) => (it.jpeg ? `${prefix}${it.id}.jpg` : null));
          await Promise.all(items.map((it, i) => (it.jpeg ? s.blobs.put(keys[i]!, it.jpeg, 'image/jpeg') : null)));
          const rows = items.map((it, i) => ({
            id: it.id,
            content_type: it.jpeg ? ('image' as const) : ('text' as const),
            text: it.jpeg ? null : (it.text ?? ''),
            blob_key: keys[i]!,
            metadata: it.metadata,
            vector: it.vector,
          }));
          const write = async () => {
            const w = await store.addItems(projectId, c.id, rows);
            if (!w) return false;
            // Without an index here (a worker-only process) the serving node catches up from the change number.
            if (index)
              await index.applyAdd(
                c.id,
                c.dimensions,
                w.changeSeq,
                w.keys,
                rows.map((r) => r.vector),
                rows.map((r) => r.metadata),
                w.replaced.map((r) => r.key),
              );
            return true;
          };
          const ok = index ? await index.lock.run(c.id, write) : await write();
          if (!ok) {
            await Promise.all(keys.filter((k) => k).map((k) => s.blobs.delete(k!).catch(() => false)));
            throw errors.notFound('collection', c.id);
          }
        },
      };
    },
  };
}
