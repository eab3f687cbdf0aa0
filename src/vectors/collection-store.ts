// Collections and items in the database (the source of truth), shaped as docs/vectors.md's records. No HTTP
// here; the routes turn these into replies.
import type { Db, Queryable, Row } from '../store/db.js';
import { isoTime } from '../store/timestamps.js';
import { newId } from '../base/ids.js';
import { sql } from './collections.sql.js';
import { vectorFromBase64, vectorToBytes } from './index-manager.js';

export interface Collection {
  id: string;
  object: 'vectors.collection';
  name: string;
  description: string | null;
  model_id: string;
  dimensions: number;
  metric: string;
  item_count: number;
  created_at: string;
  /** Internal: the last write's number (index catch-up), never sent. */
  change_seq: number;
}

export interface StoredItem {
  id: string;
  key: bigint;
  content_type: 'image' | 'text' | 'audio';
  text: string | null;
  blob_key: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface NewItem {
  id: string;
  content_type: 'image' | 'text' | 'audio';
  text: string | null;
  blob_key: string | null;
  metadata: Record<string, unknown>;
  vector: Float32Array;
}

function toCollection(r: Row): Collection {
  return {
    id: String(r.id),
    object: 'vectors.collection',
    name: String(r.name),
    description: (r.description as string | null) ?? null,
    model_id: String(r.model_id),
    dimensions: Number(r.dimensions),
    metric: String(r.metric),
    item_count: Number(r.item_count),
    created_at: isoTime(r.created_at)!,
    change_seq: Number(r.change_seq),
  };
}

function toItem(r: Row): StoredItem {
  const meta = typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata;
  return {
    id: String(r.id),
    key: BigInt(String(r.key)),
    content_type: r.content_type as StoredItem['content_type'],
    text: (r.text as string | null) ?? null,
    blob_key: (r.blob_key as string | null) ?? null,
    metadata: (meta ?? {}) as Record<string, unknown>,
    created_at: isoTime(r.created_at)!,
  };
}

/** Collections whose rows the embedded database's store keeps in memory; past it the oldest is dropped. */
const CACHED_ROWS_MAX = 10_000;

export class CollectionStore {
  /**
   * The embedded database (PGlite) belongs to this process alone, so every change to a collection's row goes
   * through this store: the rows it read stay exact until it writes them, and a search reads its collection
   * from memory (a PGlite query is a sizeable share of the event loop's time for a search request beside
   * its embedding: docs/vectors.md, "Why it is built this way"). PostgreSQL is shared with other nodes: there
   * every read goes to the database.
   */
  private readonly rows: Map<string, { projectId: string; c: Collection }> | null;
  /** Per collection id, bumped by each write: a read that a write overtook does not fill the cache. */
  private readonly writes = new Map<string, number>();

  constructor(private readonly db: Db) {
    this.rows = db.kind === 'pglite' ? new Map() : null;
  }

  private async writing<T>(id: string, write: () => Promise<T>): Promise<T> {
    if (!this.rows) return write();
    const forget = () => {
      this.rows!.delete(id);
      this.writes.set(id, (this.writes.get(id) ?? 0) + 1);
    };
    forget();
    try {
      return await write();
    } finally {
      forget();
    }
  }

  /** null when the project already has a collection of that name. */
  async create(
    projectId: string,
    c: { name: string; description: string | null; model_id: string; dimensions: number; metric: string },
  ): Promise<Collection | null> {
    const rows = await this.db.query(sql.insertCollection, [
      newId('col'),
      projectId,
      c.name,
      c.description,
      c.model_id,
      c.dimensions,
      c.metric,
    ]);
    return rows[0] ? toCollection(rows[0]) : null;
  }

  async list(projectId: string): Promise<Collection[]> {
    return (await this.db.query(sql.listCollections, [projectId])).map(toCollection);
  }

  /** The project's collection, or null (another project's collection is null too). */
  async get(projectId: string, id: string): Promise<Collection | null> {
    const cached = this.rows?.get(id);
    if (cached && cached.projectId === projectId) return { ...cached.c };
    const seen = this.writes.get(id);
    const rows = await this.db.query(sql.getCollection, [id, projectId]);
    const c = rows[0] ? toCollection(rows[0]) : null;
    if (c && this.rows && this.writes.get(id) === seen) {
      if (this.rows.size >= CACHED_ROWS_MAX) this.rows.delete(this.rows.keys().next().value!);
      this.rows.set(id, { projectId, c: { ...c } });
    }
    return c;
  }

  async all(): Promise<Collection[]> {
    return (await this.db.query(sql.allCollections)).map(toCollection);
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return this.writing(id, async () => (await this.db.query(sql.deleteCollection, [id, projectId])).length > 0);
  }

  /** One transaction: allocate keys and a change number (locking the collection row), delete the items these
   * ids name already (an upsert replaces them: recorded as deletions of the same change, so an index catching up
   * removes their keys before it adds the new ones), insert the items. Ids are unique within the batch. Writers
   * of one collection serialise on its row, so concurrent upserts of one id leave exactly one item. */
  async addItems(
    projectId: string,
    collectionId: string,
    items: NewItem[],
  ): Promise<{
    changeSeq: number;
    keys: bigint[];
    replaced: Array<{ id: string; key: bigint; blob_key: string | null }>;
  } | null> {
    return this.writing(collectionId, () =>
      this.db.tx(async (q: Queryable) => {
        const head = await q.query(sql.beginWrite, [collectionId, items.length, items.length, projectId]);
        if (!head[0]) return null;
        const first = BigInt(String(head[0].first_key));
        const changeSeq = Number(head[0].change_seq);
        const keys = items.map((_, i) => first + BigInt(i));
        const gone = await q.query(sql.deleteItems, [collectionId, items.map((it) => it.id), changeSeq]);
        if (gone.length) await q.query(sql.adjustCount, [collectionId, -gone.length]);
        const replaced = gone.map((r) => ({
          id: String(r.id),
          key: BigInt(String(r.key)),
          blob_key: (r.blob_key as string | null) ?? null,
        }));
        const params: unknown[] = [];
        items.forEach((it, i) =>
          params.push(
            it.id,
            collectionId,
            keys[i]!.toString(),
            changeSeq,
            it.content_type,
            it.text,
            it.blob_key,
            JSON.stringify(it.metadata),
            vectorToBytes(it.vector),
          ),
        );
        await q.query(sql.insertItems(items.length), params);
        return { changeSeq, keys, replaced };
      }),
    );
  }

  /** One transaction: a change number, then the deletions; unknown ids are reported back. */
  async deleteItems(
    projectId: string,
    collectionId: string,
    ids: string[],
  ): Promise<{ changeSeq: number; deleted: Array<{ id: string; key: bigint; blob_key: string | null }> } | null> {
    return this.writing(collectionId, () =>
      this.db.tx(async (q: Queryable) => {
        const head = await q.query(sql.beginWrite, [collectionId, 0, 0, projectId]);
        if (!head[0]) return null;
        const changeSeq = Number(head[0].change_seq);
        const rows = await q.query(sql.deleteItems, [collectionId, ids, changeSeq]);
        if (rows.length) await q.query(sql.adjustCount, [collectionId, -rows.length]);
        return {
          changeSeq,
          deleted: rows.map((r) => ({
            id: String(r.id),
            key: BigInt(String(r.key)),
            blob_key: (r.blob_key as string | null) ?? null,
          })),
        };
      }),
    );
  }

  /** One item of the collection, or null. */
  async getItem(collectionId: string, id: string): Promise<StoredItem | null> {
    const rows = await this.db.query(sql.getItem, [collectionId, id]);
    return rows[0] ? toItem(rows[0]) : null;
  }

  /** One transaction: a change number (locking the collection row, as every writer does), then the item's
   * metadata becomes `update(old)` and the row records the change, so other nodes' indexes read the new metadata
   * when they catch up. null when the collection is gone, 'missing' when the item is. */
  async updateMetadata(
    projectId: string,
    collectionId: string,
    id: string,
    update: (old: Record<string, unknown>) => Record<string, unknown>,
  ): Promise<{ changeSeq: number; item: StoredItem } | 'missing' | null> {
    const missing = new Error('missing item');
    try {
      return await this.writing(collectionId, () =>
        this.db.tx(async (q: Queryable) => {
          const head = await q.query(sql.beginWrite, [collectionId, 0, 0, projectId]);
          if (!head[0]) return null;
          const changeSeq = Number(head[0].change_seq);
          const rows = await q.query(sql.getItem, [collectionId, id]);
          if (!rows[0]) throw missing; // rolls the change number back
          const next = update(toItem(rows[0]).metadata);
          const updated = await q.query(sql.updateMetadata, [collectionId, id, JSON.stringify(next), changeSeq]);
          return { changeSeq, item: toItem(updated[0]!) };
        }),
      );
    } catch (e) {
      if (e === missing) return 'missing';
      throw e;
    }
  }

  async listItems(collectionId: string, limit: number, offset: number): Promise<StoredItem[]> {
    return (await this.db.query(sql.listItems, [collectionId, limit, offset])).map(toItem);
  }

  /** Items by index key, each with its stored float32 vector (search rescoring); deleted keys are absent. */
  async itemsByKeys(collectionId: string, keys: bigint[]): Promise<Map<bigint, StoredItem & { vector: Float32Array }>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db.query(sql.itemsByKeys, [collectionId, keys.map(String)]);
    return new Map(
      rows.map((r) => {
        const it = { ...toItem(r), vector: vectorFromBase64(String(r.vector_b64)) };
        return [it.key, it] as const;
      }),
    );
  }
}
