// A collection's item metadata in memory, column by column, to evaluate a search filter over every item at
// once: the answer is a bitmap over index keys (key k allowed when bit k % 32 of word k / 32 is set), which the
// vector index takes as its search filter. Keys are allocated densely per collection (1, 2, 3, ...), so a column
// is a typed array indexed by key (Column). Scanning one is a branch-free loop (npm run bench -- vectors prints
// its cost a condition; docs/vectors.md, "Why it is built this way"), far cheaper than asking the database
// for the matching keys on every search; and the answer for a filter is cached until the collection's next
// change, so a filter repeated between writes costs a lookup. The index manager keeps it in step with the
// database (adds, deletes, metadata patches, catch-up) and loads it on a collection's first filtered search.
import type { FilterNode } from './filter.js';

const MIN_CAPACITY = 1024;
/** Filter answers kept per collection (evaluate's cache): at most this many, and this many bytes of bitmaps
 * (a bitmap is one bit per key: 125 kB at 1M items). */
const CACHE_ENTRIES = 32;
const CACHE_BYTES = 16 * 2 ** 20;

export interface FilterMatch {
  /** One bit per key, as the vector index's `allowed` bitmap (a Uint8Array view of the same bytes). */
  bits: Uint32Array;
  /** How many items match. */
  count: number;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** One metadata key's values by item key, typed so a condition is a tight loop over a typed array: numbers in
 * `num` (NaN where the value is not a number), strings and booleans as ids of a per-column dictionary in `sym`
 * (0 where the value is neither). Objects, arrays and null match no condition, so they are stored as absent. */
interface Column {
  num: Float64Array;
  sym: Int32Array;
  ids: Map<string | boolean, number>;
}

export class MetadataColumns {
  private readonly columns = new Map<string, Column>();
  /** Each key's metadata object, to clear its columns when it changes or goes. */
  private rows: Array<Record<string, unknown> | undefined> = [];
  private capacity = 0;
  private live = 0;
  /** One past the highest key ever set: evaluation scans keys below it. */
  private end = 0;
  /** Answers by filter (canonical key), least recently used first; emptied by every change. */
  private readonly cache = new Map<string, FilterMatch>();
  private cacheBytes = 0;
  /** Counts changes (adds, replacements, patches, deletions), for tests and logs. */
  generation = 0;

  get size(): number {
    return this.live;
  }

  private grow(key: number): void {
    if (key < this.capacity) return;
    const next = Math.max(MIN_CAPACITY, this.capacity * 2, key + 1);
    for (const col of this.columns.values()) {
      const num = new Float64Array(next).fill(NaN);
      num.set(col.num);
      const sym = new Int32Array(next);
      sym.set(col.sym);
      col.num = num;
      col.sym = sym;
    }
    for (let i = this.rows.length; i < next; i++) this.rows.push(undefined);
    this.capacity = next;
  }

  private column(name: string): Column {
    let col = this.columns.get(name);
    if (!col) {
      col = { num: new Float64Array(this.capacity).fill(NaN), sym: new Int32Array(this.capacity), ids: new Map() };
      this.columns.set(name, col);
    }
    return col;
  }

  /** The item under `key` now has this metadata (added, replaced or patched). */
  set(key: bigint, metadata: Record<string, unknown>): void {
    const k = Number(key);
    this.grow(k);
    this.changed();
    if (k >= this.end) this.end = k + 1;
    this.clear(k);
    this.rows[k] = metadata;
    this.live++;
    for (const [name, value] of Object.entries(metadata)) {
      if (typeof value === 'number') {
        this.column(name).num[k] = value;
      } else if (typeof value === 'string' || typeof value === 'boolean') {
        const col = this.column(name);
        let id = col.ids.get(value);
        if (id === undefined) col.ids.set(value, (id = col.ids.size + 1));
        col.sym[k] = id;
      }
    }
  }

  /** The item under `key` is gone. */
  delete(key: bigint): void {
    const k = Number(key);
    this.changed();
    if (k < this.capacity) this.clear(k);
  }

  private clear(k: number): void {
    const old = this.rows[k];
    if (!old) return;
    for (const name of Object.keys(old)) {
      const col = this.columns.get(name);
      if (col) {
        col.num[k] = NaN;
        col.sym[k] = 0;
      }
    }
    this.rows[k] = undefined;
    this.live--;
  }

  /** The keys that match the filter, as a bitmap, and their count. With `cacheKey` (the filter's canonical
   * form, filterCacheKey), the answer is kept until the next change to these columns and handed out again for
   * the same key: callers must not modify it. */
  evaluate(filter: FilterNode, cacheKey?: string): FilterMatch {
    if (cacheKey !== undefined) {
      const hit = this.cache.get(cacheKey);
      if (hit) {
        // Most recently used last: the first entry is the one to drop.
        this.cache.delete(cacheKey);
        this.cache.set(cacheKey, hit);
        return hit;
      }
    }
    const bits = this.bitsOf(filter);
    let count = 0;
    for (let w = 0; w < bits.length; w++) if (bits[w]) count += popcount(bits[w]!);
    const match = { bits, count };
    if (cacheKey !== undefined) {
      this.cache.set(cacheKey, match);
      this.cacheBytes += bits.byteLength;
      for (const [k, m] of this.cache) {
        if (this.cache.size <= CACHE_ENTRIES && this.cacheBytes <= CACHE_BYTES) break;
        this.cache.delete(k);
        this.cacheBytes -= m.bits.byteLength;
      }
    }
    return match;
  }

  /** Cached answers are stale once any item changes. */
  private changed(): void {
    this.generation++;
    if (this.cache.size) {
      this.cache.clear();
      this.cacheBytes = 0;
    }
  }

  private bitsOf(node: FilterNode): Uint32Array {
    const words = (this.capacity + 31) >>> 5;
    if (node.op === 'and' || node.op === 'or') {
      const parts = node.nodes.map((n) => this.bitsOf(n));
      const out = parts[0]!;
      for (let p = 1; p < parts.length; p++) {
        const b = parts[p]!;
        if (node.op === 'and') for (let w = 0; w < words; w++) out[w]! &= b[w]!;
        else for (let w = 0; w < words; w++) out[w]! |= b[w]!;
      }
      return out;
    }
    const out = new Uint32Array(words);
    const col = this.columns.get(node.key);
    if (!col) return out;
    // Keys above the highest ever set hold nothing: the loops stop there.
    const n = this.end;
    if (node.op === 'cmp') {
      const v = node.value;
      switch (node.cmp) {
        case 'gt':
          fillGt(out, col.num, v, n);
          break;
        case 'gte':
          fillGte(out, col.num, v, n);
          break;
        case 'lt':
          fillLt(out, col.num, v, n);
          break;
        case 'lte':
          fillLte(out, col.num, v, n);
          break;
      }
      return out;
    }
    const values = node.op === 'eq' ? [node.value] : [...node.values];
    const numbers = values.filter((v): v is number => typeof v === 'number');
    const ids = values
      .filter((v): v is string | boolean => typeof v !== 'number')
      .map((v) => col.ids.get(v))
      .filter((id): id is number => id !== undefined);
    for (const v of numbers) fillEq(out, col.num, v, n);
    if (ids.length === 1) fillIdEq(out, col.sym, ids[0]!, n);
    else if (ids.length > 1) {
      const mark = new Uint8Array(col.ids.size + 1);
      for (const id of ids) mark[id] = 1;
      fillIdMarked(out, col.sym, mark, n);
    }
    return out;
  }
}

// One loop per condition, the comparison written out (a callback per item would cost several times the loop).
// Each builds 32 items' bits in a register (a fixed 32-step inner loop, the tail after) and ORs the word into
// `out` once: the comparison's boolean becomes the bit without a branch (`+(a < b)`), which V8 compiles to a
// set-on-condition. A branch per item mispredicts on uncorrelated metadata (half of the time at 50%) and
// measured several times slower there, winning only slightly when almost nothing or almost everything
// matches (docs/vectors.md, "Why it is built this way").
function fillGt(out: Uint32Array, col: Float64Array, v: number, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= +(col[base + j]! > v) << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= +(col[i]! > v) << (i & 31);
}
function fillGte(out: Uint32Array, col: Float64Array, v: number, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= +(col[base + j]! >= v) << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= +(col[i]! >= v) << (i & 31);
}
function fillLt(out: Uint32Array, col: Float64Array, v: number, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= +(col[base + j]! < v) << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= +(col[i]! < v) << (i & 31);
}
function fillLte(out: Uint32Array, col: Float64Array, v: number, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= +(col[base + j]! <= v) << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= +(col[i]! <= v) << (i & 31);
}
function fillEq(out: Uint32Array, col: Float64Array, v: number, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= +(col[base + j] === v) << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= +(col[i] === v) << (i & 31);
}
function fillIdEq(out: Uint32Array, col: Int32Array, v: number, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= +(col[base + j] === v) << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= +(col[i] === v) << (i & 31);
}
/** `v[id]` is 1 for the ids that match, 0 for the others (id 0, absent, included). */
function fillIdMarked(out: Uint32Array, col: Int32Array, v: Uint8Array, n: number): void {
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    const base = w << 5;
    let x = 0;
    for (let j = 0; j < 32; j++) x |= v[col[base + j]!]! << j;
    out[w]! |= x;
  }
  for (let i = full << 5; i < n; i++) out[i >>> 5]! |= v[col[i]!]! << (i & 31);
}

/** The keys a bitmap allows, in key order. */
export function keysOf(bits: Uint32Array, count: number): BigUint64Array {
  const out = new BigUint64Array(count);
  let j = 0;
  for (let w = 0; w < bits.length && j < count; w++) {
    let x = bits[w]!;
    while (x) {
      const b = 31 - Math.clz32(x & -x);
      out[j++] = BigInt(w * 32 + b);
      x &= x - 1;
    }
  }
  return out;
}
