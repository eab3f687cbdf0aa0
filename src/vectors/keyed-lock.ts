// One writer at a time per key (a collection): USearch has known bugs under concurrent updates, and the
// database allocates keys in commit order only when writes of one collection do not interleave.
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** True while someone holds or waits for the key. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }
}
