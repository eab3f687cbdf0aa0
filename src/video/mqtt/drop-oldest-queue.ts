// A bounded FIFO that makes room by dropping its oldest item: what waits for the broker while it cannot be
// reached. Pushing never blocks and never fails, so the pipeline that produces messages keeps its pace
// whatever the broker does; the caller counts what push() reports as dropped. A ring buffer: push and shift
// are O(1) and the memory is the bound's, allocated as items arrive.

export class DropOldestQueue<T> {
  #items: Array<T | undefined> = [];
  #head = 0;
  #size = 0;

  constructor(readonly bound: number) {
    if (!(Number.isInteger(bound) && bound >= 1))
      throw new RangeError(`DropOldestQueue bound must be an integer >= 1 (got ${bound})`);
  }

  get size(): number {
    return this.#size;
  }

  /** Adds an item at the end; returns how many were dropped to make room (0 or 1). */
  push(item: T): number {
    if (this.#size < this.bound) {
      const at = (this.#head + this.#size) % this.bound;
      if (at === this.#items.length) this.#items.push(item);
      else this.#items[at] = item;
      this.#size++;
      return 0;
    }
    // Full: the oldest slot takes the new item and the head moves past it.
    this.#items[this.#head] = item;
    this.#head = (this.#head + 1) % this.bound;
    return 1;
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.bound;
    this.#size--;
    if (this.#size === 0) {
      this.#head = 0;
      this.#items = [];
    }
    return item;
  }

  /** The items, oldest first (not removed). */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.#size; i++) out.push(this.#items[(this.#head + i) % this.bound] as T);
    return out;
  }
}
