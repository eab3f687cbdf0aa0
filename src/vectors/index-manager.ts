// One USearch HNSW index per collection under <data-dir>/indexes: <id>.usearch plus <id>.json, the
// checkpoint (the collection's change number the file includes). The database is the source of truth; an
// index is an accelerator that is
//   - loaded and caught up (added items after its checkpoint, deletions after it) when it is behind,
//   - rebuilt from the database when its file is missing, unreadable, of another format (an older release's
//     float32 index included) or dimensions, or of the wrong size after catch-up,
//   - saved (index first, then checkpoint, both by rename) a moment after writes, so a burst of index
//     requests costs one save.
// Callers hold the collection's lock (KeyedLock) around writes; every USearch call is synchronous and
// small (chunks of ADD_CHUNK vectors with a macrotask yield between), so the event loop never stalls for long.
//
// The index holds 8-bit vectors (a quarter of float32's memory and memory traffic, and far cheaper distances):
// it only proposes candidates. Search asks it for candidateCount(k) keys and `rescore` ranks them by exact
// cosine over the float32 vectors the database stores (the route reads them with the rows it returns anyway),
// so clients get exact scores and the 8-bit rounding costs no recall. `npm run bench -- vectors` measures this
// path (INDEX_SETTINGS, candidates, rescoring) against hnswlib-node and brute force. The index itself is the
// addon's (src/native/vectors.ts): USearch built from source with prefetching and huge pages.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Db } from '../store/db.js';
import { sha256File } from '../inference/registry.js';
import type { Logger } from '../base/log.js';
import { sql } from './collections.sql.js';
import { KeyedLock } from './keyed-lock.js';
import { newIndex, type VectorIndex } from './vector-index.js';
import { filterCacheKey, type FilterNode } from './filter.js';
import { keysOf, MetadataColumns } from './metadata-columns.js';
import { observeVectorSearch } from '../metrics/vectors.js';

/** Rows read from the database per page during catch-up / rebuild. */
const CHUNK = 512;
/** Vectors inserted per synchronous USearch call: each call blocks the loop, so a call is kept short
 * (docs/vectors.md, "Why it is built this way"). */
const ADD_CHUNK = 64;
const SAVE_DELAY_MS = 500;
/** A save blocks the loop (the binding has no async save): wait at least this many times its last duration
 * before the next one, so under steady writes saving a big index costs at most 1 / SAVE_SPACING of the loop.
 * Safe because an index that is behind its checkpoint is caught up from the database at open. */
const SAVE_SPACING = 20;
/** 2: float32 vectors; 3: 8-bit vectors (INDEX_SETTINGS). A checkpoint of another format is rebuilt at open. */
const FORMAT = 3;

/** Keys asked of the index for k results: the exact rescoring keeps the best k. Eight more are enough for the
 * 8-bit order to miss no more than float32 did (100k x 512-d clustered at ef 64: recall@10 0.993 with 18, and
 * recall@100 0.966 with 108 against 0.968 for a float32 index); they also stand in for items deleted on another
 * node that this index has not seen yet. */
export function candidateCount(k: number): number {
  return k + 8;
}

/** The index's candidates for the k nearest to `query`, best first by its 8-bit estimate: candidateCount(k) keys
 * (fewer when the index is smaller), searched with the given ef (default: the index's). The index quantises the
 * query itself (scaled to unit length), so it is passed as it is. */
export function searchCandidates(index: VectorIndex, query: Float32Array, k: number, expansion = 0): BigUint64Array {
  const size = index.size();
  if (size === 0) return new BigUint64Array(0);
  const t = performance.now();
  const keys = index.search(query, Math.min(candidateCount(k), size), expansion);
  observeVectorSearch('graph', t);
  return keys;
}

/** Filtered search plans: an exact search over the matching items' 8-bit vectors (searchKeys) when at most
 * this many of an index's `size` items match, else the graph search with the filter inside. The graph walk only
 * stops once it holds ef matching nodes, so it visits about (unfiltered visits) / (matching share) nodes: its
 * cost g / s grows as the share s shrinks. Exact search costs c per matching item, c * s * size, whatever the
 * share (more once the vectors fall out of cache). They cross where s * size = sqrt(size * g / c), and
 * sqrt(1500 * size) follows the crossings measured at 10k and 100k items (docs/vectors.md, "Why it is built this way").
 * Below it the exact plan is also exact (recall 1 before rescoring). */
export function exactSearchMaxMatches(size: number): number {
  return Math.floor(Math.sqrt(1500 * size));
}

/** Candidates (as searchCandidates) among the items a filter matches, given their bitmap: an exact search
 * over the matching items when there are few (exactSearchMaxMatches), otherwise the graph search with the
 * bitmap as its filter. Either way the filter applies inside the search: candidateCount(k) matching keys come
 * back whenever that many match. */
export function searchFilteredCandidates(
  index: VectorIndex,
  query: Float32Array,
  k: number,
  match: { bits: Uint32Array; count: number },
  expansion = 0,
): BigUint64Array {
  if (match.count === 0 || index.size() === 0) return new BigUint64Array(0);
  const wanted = Math.min(candidateCount(k), match.count);
  const t = performance.now();
  const exact = match.count <= exactSearchMaxMatches(index.size());
  const keys = exact
    ? index.searchKeys(query, wanted, keysOf(match.bits, match.count))
    : index.search(
        query,
        wanted,
        expansion,
        new Uint8Array(match.bits.buffer, match.bits.byteOffset, match.bits.byteLength),
      );
  observeVectorSearch(exact ? 'exact' : 'filtered', t);
  return keys;
}

interface Loaded {
  index: VectorIndex;
  dims: number;
  /** The collection change number this index includes. */
  applied: number;
  saveTimer?: NodeJS.Timeout;
  saving?: Promise<void>;
  /** How long the last synchronous save blocked, to space saves of big indexes further apart. */
  lastSaveMs?: number;
  /** The items' metadata by key, for filters: loaded on the first filtered search, then kept in step. */
  meta?: MetadataColumns;
}

/** `sha256` and `bytes` of the index file: USearch's loader trusts its input (a corrupt file crashes the process), so nothing unverified reaches it. */
interface Checkpoint {
  format: number;
  change_seq: number;
  size: number;
  dimensions: number;
  bytes: number;
  sha256: string;
}

export type OpenOutcome = 'loaded' | 'caught-up' | 'rebuilt' | 'created';

export function vectorToBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function bytesToVector(b: Uint8Array): Float32Array {
  // A fresh copy: driver buffers may be unaligned views into a larger message.
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** A vector read as base64 text (collections.sql.ts, VECTOR_B64). */
export function vectorFromBase64(b64: string): Float32Array {
  return bytesToVector(Buffer.from(b64, 'base64'));
}

function metadataOf(v: unknown): Record<string, unknown> {
  return ((typeof v === 'string' ? JSON.parse(v) : v) ?? {}) as Record<string, unknown>;
}

export class IndexManager {
  readonly lock = new KeyedLock();
  private readonly loaded = new Map<string, Loaded>();
  /** How each index was last opened (tests and logs read it). */
  readonly outcomes = new Map<string, OpenOutcome>();
  /** Longest single synchronous USearch call seen, in ms (the event-loop cost; bench and logs read it). */
  maxBlockMs = 0;

  constructor(
    private readonly db: Db,
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  private files(id: string) {
    return { index: join(this.dir, `${id}.usearch`), meta: join(this.dir, `${id}.json`) };
  }

  private timed<T>(fn: () => T): T {
    const t = performance.now();
    try {
      return fn();
    } finally {
      this.maxBlockMs = Math.max(this.maxBlockMs, performance.now() - t);
    }
  }

  /** At start: every collection's index is loaded, caught up or rebuilt before requests arrive. */
  async openAll(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const rows = await this.db.query(sql.allCollections);
    for (const r of rows) {
      const id = String(r.id);
      await this.lock.run(id, () => this.ensureCurrentLocked(id, Number(r.dimensions), Number(r.change_seq)));
    }
  }

  /** Brings the index up to the database's change number (caller holds the lock). */
  async ensureCurrentLocked(id: string, dims: number, changeSeq: number): Promise<Loaded> {
    let l = this.loaded.get(id);
    if (!l) {
      l = await this.load(id, dims);
      this.loaded.set(id, l);
    }
    if (l.applied < changeSeq) {
      await this.catchUp(id, l);
      if (this.outcomes.get(id) === 'loaded') this.outcomes.set(id, 'caught-up');
    }
    return l;
  }

  /** Items in the loaded indexes, and changes the database has that they have not applied (metrics). */
  async lagStats(): Promise<{ items: number; behind: number }> {
    let items = 0;
    let behind = 0;
    for (const r of await this.db.query(sql.allCollections)) {
      const l = this.loaded.get(String(r.id));
      if (!l) continue;
      items += l.index.size();
      behind += Math.max(0, Number(r.change_seq) - l.applied);
    }
    return { items, behind };
  }

  /** Search path: current index without waiting for the lock when nothing is behind. */
  async current(id: string, dims: number, changeSeq: number): Promise<Loaded> {
    const l = this.loaded.get(id);
    if (l && l.applied >= changeSeq) return l;
    return this.lock.run(id, () => this.ensureCurrentLocked(id, dims, changeSeq));
  }

  private async load(id: string, dims: number): Promise<Loaded> {
    const f = this.files(id);
    if (existsSync(f.index) && existsSync(f.meta)) {
      try {
        const meta = JSON.parse(await readFile(f.meta, 'utf8')) as Checkpoint;
        if (meta.format !== FORMAT || meta.dimensions !== dims)
          throw new Error('checkpoint of another format or dimensions');
        if ((await stat(f.index)).size !== meta.bytes || (await sha256File(f.index)) !== meta.sha256)
          throw new Error('index file does not match its checkpoint checksum');
        const index = newIndex(dims);
        this.timed(() => index.load(f.index));
        if (index.dimensions() !== dims || index.size() !== meta.size)
          throw new Error(
            `index holds ${index.size()} vectors of ${index.dimensions()} dimensions, checkpoint says ${meta.size} of ${dims}`,
          );
        this.outcomes.set(id, 'loaded');
        return { index, dims, applied: meta.change_seq };
      } catch (e) {
        this.log.warn(
          { collection: id, err: (e as Error).message },
          'vector index unreadable; rebuilding from the database',
        );
      }
    }
    this.outcomes.set(id, existsSync(f.index) || existsSync(f.meta) ? 'rebuilt' : 'created');
    const l: Loaded = { index: newIndex(dims), dims, applied: 0 };
    return l;
  }

  /** Adds what the database has after l.applied and removes what it deleted since; rebuilds when sizes disagree. */
  private async catchUp(id: string, l: Loaded): Promise<void> {
    const state = await this.db.query(sql.collectionState, [id]);
    if (!state[0]) return;
    const target = Number(state[0].change_seq);
    const deleted = await this.db.query(sql.deletionsSince, [id, l.applied]);
    for (let i = 0; i < deleted.length; i += CHUNK) {
      const keys = BigUint64Array.from(deleted.slice(i, i + CHUNK).map((r) => BigInt(String(r.key))));
      // Keys the index never had (added and deleted while it was behind) are skipped by remove itself.
      this.timed(() => l.index.remove(keys));
      if (l.meta) for (const k of keys) l.meta.delete(k);
      await yieldToLoop();
    }
    await this.addFromDb(id, l, l.applied);
    const count = Number((await this.db.query(sql.countItems, [id]))[0]!.n);
    if (l.index.size() !== count) {
      this.log.warn(
        { collection: id, index: l.index.size(), database: count },
        'vector index disagrees with the database; rebuilding',
      );
      l.index = newIndex(l.dims);
      l.meta = undefined;
      await this.addFromDb(id, l, 0);
      this.outcomes.set(id, 'rebuilt');
    }
    l.applied = target;
    this.scheduleSave(id, l);
  }

  private async addFromDb(id: string, l: Loaded, since: number): Promise<void> {
    let after = 0n;
    for (;;) {
      const rows = await this.db.query(sql.vectorsSince, [id, since, after.toString(), CHUNK]);
      if (rows.length === 0) break;
      const keys = BigUint64Array.from(rows.map((r) => BigInt(String(r.key))));
      const vectors = rows.map((r) => vectorFromBase64(String(r.vector_b64)));
      // Rows after the checkpoint are new items or items whose metadata changed (their vectors are present).
      if (l.meta) rows.forEach((r, i) => l.meta!.set(keys[i]!, metadataOf(r.metadata)));
      for (let i = 0; i < keys.length; i += ADD_CHUNK) {
        this.addVectors(l, keys.slice(i, i + ADD_CHUNK), vectors.slice(i, i + ADD_CHUNK), true);
        await yieldToLoop();
      }
      after = keys[keys.length - 1]!;
    }
  }

  private addVectors(l: Loaded, keys: BigUint64Array, vectors: Float32Array[], skipPresent: boolean): void {
    this.timed(() => {
      let ks = keys;
      let vs = vectors;
      if (skipPresent) {
        const present = l.index.contains(keys);
        ks = keys.filter((_, i) => !present[i]);
        vs = vectors.filter((_, i) => !present[i]);
      }
      if (ks.length === 0) return;
      // As they are: the index scales each vector to unit length itself when it quantises it.
      const flat = new Float32Array(ks.length * l.dims);
      vs.forEach((v, i) => flat.set(v.subarray(0, l.dims), i * l.dims));
      // One thread: the insert runs on the event loop between yields, and the other cores serve requests.
      // (Several threads would be as correct: the addon's parallel inserts lose no links.)
      l.index.add(ks, flat);
    });
  }

  /** After the database committed change `changeSeq` adding these items, and removing the `replaced` keys
   * (items the added ones replace: an upsert by id), caller holding the lock. */
  async applyAdd(
    id: string,
    dims: number,
    changeSeq: number,
    keys: bigint[],
    vectors: Float32Array[],
    metadata: Array<Record<string, unknown>>,
    replaced: bigint[] = [],
  ): Promise<void> {
    const l = await this.ensureCurrentLocked(id, dims, changeSeq - 1);
    if (l.applied !== changeSeq - 1) {
      await this.catchUp(id, l);
      return;
    }
    if (replaced.length) this.timed(() => l.index.remove(BigUint64Array.from(replaced)));
    if (l.meta) {
      for (const k of replaced) l.meta.delete(k);
      keys.forEach((k, i) => l.meta!.set(k, metadata[i]!));
    }
    for (let i = 0; i < keys.length; i += ADD_CHUNK) {
      this.addVectors(l, BigUint64Array.from(keys.slice(i, i + ADD_CHUNK)), vectors.slice(i, i + ADD_CHUNK), false);
      if (i + ADD_CHUNK < keys.length) await yieldToLoop();
    }
    l.applied = changeSeq;
    this.scheduleSave(id, l);
  }

  /** After the database committed change `changeSeq` deleting these keys (caller holds the lock). */
  async applyDelete(id: string, dims: number, changeSeq: number, keys: bigint[]): Promise<void> {
    const l = await this.ensureCurrentLocked(id, dims, changeSeq - 1);
    if (l.applied !== changeSeq - 1) {
      await this.catchUp(id, l);
      return;
    }
    if (keys.length) this.timed(() => l.index.remove(BigUint64Array.from(keys)));
    if (l.meta) for (const k of keys) l.meta.delete(k);
    l.applied = changeSeq;
    this.scheduleSave(id, l);
  }

  /** After the database committed change `changeSeq` giving the item under `key` new metadata (caller holds
   * the lock). Nothing to save: the vectors are unchanged, and an index file whose checkpoint is older reads
   * the row again at its next catch-up. */
  async applyMetadata(
    id: string,
    dims: number,
    changeSeq: number,
    key: bigint,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    const l = await this.ensureCurrentLocked(id, dims, changeSeq - 1);
    if (l.applied !== changeSeq - 1) {
      await this.catchUp(id, l);
      return;
    }
    l.meta?.set(key, metadata);
    l.applied = changeSeq;
  }

  /** Candidate keys among the items `filter` matches (searchFilteredCandidates), the collection's metadata
   * loaded from the database on its first filtered search. The filter's bitmap is cached by the columns until
   * the collection's next change they see (a write here or a catch-up from another node's writes: every one
   * passes through them, and a rebuild replaces them). */
  async filteredCandidates(
    id: string,
    l: Loaded,
    query: Float32Array,
    k: number,
    filter: FilterNode,
  ): Promise<bigint[]> {
    if (!l.meta) {
      await this.lock.run(id, async () => {
        if (l.meta) return;
        const meta = new MetadataColumns();
        let after = 0n;
        for (;;) {
          const rows = await this.db.query(sql.metadataSince, [id, after.toString(), CHUNK * 8]);
          if (rows.length === 0) break;
          for (const r of rows) meta.set(BigInt(String(r.key)), metadataOf(r.metadata));
          after = BigInt(String(rows[rows.length - 1]!.key));
        }
        l.meta = meta;
      });
    }
    return [
      ...this.timed(() =>
        searchFilteredCandidates(l.index, query, k, l.meta!.evaluate(filter, filterCacheKey(filter))),
      ),
    ];
  }

  /** Candidate keys for the k nearest to `query` (candidateCount(k) of them): rank them with `rescore` over
   * the database's vectors. */
  candidates(l: Loaded, query: Float32Array, k: number): bigint[] {
    return [...this.timed(() => searchCandidates(l.index, query, k))];
  }

  private scheduleSave(id: string, l: Loaded): void {
    if (l.saveTimer) return;
    l.saveTimer = setTimeout(
      () => {
        l.saveTimer = undefined;
        // One save at a time per index (they share the temp file name).
        l.saving = (l.saving ?? Promise.resolve())
          .then(() => this.save(id, l))
          .catch((e) => this.log.error({ collection: id, err: e }, 'saving a vector index failed'));
      },
      Math.max(SAVE_DELAY_MS, SAVE_SPACING * (l.lastSaveMs ?? 0)),
    );
    l.saveTimer.unref?.();
  }

  /** Index file first, checkpoint second: a crash between them leaves an older checkpoint, which catch-up handles. */
  private async save(id: string, l: Loaded): Promise<void> {
    if (this.loaded.get(id) !== l) return;
    await mkdir(this.dir, { recursive: true });
    const f = this.files(id);
    const tmp = `${f.index}.${process.pid}.tmp`;
    const applied = l.applied;
    const size = l.index.size();
    const t = performance.now();
    this.timed(() => l.index.save(tmp));
    l.lastSaveMs = performance.now() - t;
    const meta: Checkpoint = {
      format: FORMAT,
      change_seq: applied,
      size,
      dimensions: l.dims,
      bytes: (await stat(tmp)).size,
      sha256: await sha256File(tmp),
    };
    await rename(tmp, f.index);
    const metaTmp = `${f.meta}.${process.pid}.tmp`;
    await writeFile(metaTmp, JSON.stringify(meta));
    await rename(metaTmp, f.meta);
  }

  /** Saves every index with pending writes now (shutdown, tests). */
  async flush(): Promise<void> {
    for (const [id, l] of this.loaded) {
      await l.saving;
      if (l.saveTimer) {
        clearTimeout(l.saveTimer);
        l.saveTimer = undefined;
        await this.lock.run(id, () => this.save(id, l));
      }
    }
  }

  /** The collection is gone: forget its index and delete its files (caller holds the lock). */
  async drop(id: string): Promise<void> {
    const l = this.loaded.get(id);
    if (l?.saveTimer) clearTimeout(l.saveTimer);
    await l?.saving;
    this.loaded.delete(id);
    const f = this.files(id);
    await Promise.all([rm(f.index, { force: true }), rm(f.meta, { force: true })]);
  }
}
