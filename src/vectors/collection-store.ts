// Collections and items in the database (the source of truth), shaped as docs/api.md's records. No HTTP
// here; the routes turn these into replies.
import type { Db, Queryable, Row } from '../store/db.js';
import { newId } from '../ids.js';
import { sql } from './collections.sql.js';
import { bytesToVector, vectorToBytes } from './index-manager.js';

export interface Collection {
  id: string; object: 'vectors.collection'; name: string; description: string | null; model_id: string;
  dimensions: number; metric: string; item_count: number; created_at: string;
  /** Internal: the last write's number (index catch-up), never sent. */
  change_seq: number;
}

export interface StoredItem {
  id: string; key: bigint; content_type: 'image' | 'text' | 'audio'; text: string | null; blob_key: string | null;
  metadata: Record<string, unknown>; created_at: string;
}

export interface NewItem {
  id: string; content_type: 'image' | 'text' | 'audio'; text: string | null; blob_key: string | null;
  metadata: Record<string, unknown>; vector: Float32Array;
}

const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString();

function toCollection(r: Row): Collection {
  return {
    id: String(r.id), object: 'vectors.collection', name: String(r.name), description: (r.description as string | null) ?? null,
    model_id: String(r.model_id), dimensions: Number(r.dimensions), metric: String(r.metric), item_count: Number(r.item_count),
    created_at: iso(r.created_at), change_seq: Number(r.change_seq),
  };
}

function toItem(r: Row): StoredItem {
  const meta = typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata;
  return {
    id: String(r.id), key: BigInt(String(r.key)), content_type: r.content_type as StoredItem['content_type'],
    text: (r.text as string | null) ?? null, blob_key: (r.blob_key as string | null) ?? null,
    metadata: (meta ?? {}) as Record<string, unknown>, created_at: iso(r.created_at),
  };
}

export class CollectionStore {
  constructor(private readonly db: Db) {}

  /** null when the project already has a collection of that name. */
  async create(projectId: string, c: { name: string; description: string | null; model_id: string; dimensions: number; metric: string }): Promise<Collection | null> {
    const rows = await this.db.query(sql.insertCollection, [newId('col'), projectId, c.name, c.description, c.model_id, c.dimensions, c.metric]);
    return rows[0] ? toCollection(rows[0]) : null;
  }

  async list(projectId: string): Promise<Collection[]> {
    return (await this.db.query(sql.listCollections, [projectId])).map(toCollection);
  }

  /** The project's collection, or null (another project's collection is null too). */
  async get(projectId: string, id: string): Promise<Collection | null> {
    const rows = await this.db.query(sql.getCollection, [id, projectId]);
    return rows[0] ? toCollection(rows[0]) : null;
  }

  async all(): Promise<Collection[]> {
    return (await this.db.query(sql.allCollections)).map(toCollection);
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return (await this.db.query(sql.deleteCollection, [id, projectId])).length > 0;
  }

  /** One transaction: allocate keys and a change number (locking the collection row), insert the items. */
  async addItems(projectId: string, collectionId: string, items: NewItem[]): Promise<{ changeSeq: number; keys: bigint[] } | null> {
    return this.db.tx(async (q: Queryable) => {
      const head = await q.query(sql.beginWrite, [collectionId, items.length, items.length, projectId]);
      if (!head[0]) return null;
      const first = BigInt(String(head[0].first_key));
      const changeSeq = Number(head[0].change_seq);
      const keys = items.map((_, i) => first + BigInt(i));
      const params: unknown[] = [];
      items.forEach((it, i) => params.push(it.id, collectionId, keys[i]!.toString(), changeSeq, it.content_type, it.text, it.blob_key,
        JSON.stringify(it.metadata), vectorToBytes(it.vector)));
      await q.query(sql.insertItems(items.length), params);
      return { changeSeq, keys };
    });
  }

  /** One transaction: a change number, then the deletions; unknown ids are reported back. */
  async deleteItems(projectId: string, collectionId: string, ids: string[]): Promise<{ changeSeq: number; deleted: Array<{ id: string; key: bigint; blob_key: string | null }> } | null> {
    return this.db.tx(async (q: Queryable) => {
      const head = await q.query(sql.beginWrite, [collectionId, 0, 0, projectId]);
      if (!head[0]) return null;
      const changeSeq = Number(head[0].change_seq);
      const rows = await q.query(sql.deleteItems, [collectionId, ids, changeSeq]);
      if (rows.length) await q.query(sql.adjustCount, [collectionId, -rows.length]);
      return { changeSeq, deleted: rows.map((r) => ({ id: String(r.id), key: BigInt(String(r.key)), blob_key: (r.blob_key as string | null) ?? null })) };
    });
  }

  async listItems(collectionId: string, limit: number, offset: number): Promise<StoredItem[]> {
    return (await this.db.query(sql.listItems, [collectionId, limit, offset])).map(toItem);
  }

  /** Items by index key, each with its stored float32 vector (search rescoring); deleted keys are absent. */
  async itemsByKeys(collectionId: string, keys: bigint[]): Promise<Map<bigint, StoredItem & { vector: Float32Array }>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db.query(sql.itemsByKeys, [collectionId, keys.map(String)]);
    return new Map(rows.map((r) => { const it = { ...toItem(r), vector: bytesToVector(r.vector as Uint8Array) }; return [it.key, it] as const; }));
  }
}
