// Finished archives never change, so a process keeps the most recently replayed ones in memory: hundreds of
// subscribers replaying one task cost one database read instead of one each. Live archives are always read
// from the database. Bounded by entry size and total size (least recently used goes first).
export class FinishedArchiveCache {
  private readonly entries = new Map<string, Buffer>();
  private readonly loading = new Map<string, Promise<Buffer>>();
  private total = 0;

  constructor(
    readonly maxEntryBytes = 8 * 1024 * 1024,
    private readonly maxTotalBytes = 64 * 1024 * 1024,
  ) {}

  /** The whole archive of a finished task of `size` bytes, loaded once by `load` however many ask at once. */
  async get(taskId: string, size: number, load: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.entries.get(taskId);
    if (hit && hit.length === size) {
      this.entries.delete(taskId);
      this.entries.set(taskId, hit);
      return hit;
    }
    let p = this.loading.get(taskId);
    if (!p) {
      p = load()
        .then((buf) => {
          if (buf.length === size) this.put(taskId, buf);
          return buf;
        })
        .finally(() => this.loading.delete(taskId));
      this.loading.set(taskId, p);
    }
    return p;
  }

  private put(taskId: string, buf: Buffer): void {
    const old = this.entries.get(taskId);
    if (old) {
      this.total -= old.length;
      this.entries.delete(taskId);
    }
    this.entries.set(taskId, buf);
    this.total += buf.length;
    for (const [k, v] of this.entries) {
      if (this.total <= this.maxTotalBytes) break;
      this.entries.delete(k);
      this.total -= v.length;
    }
  }
}
