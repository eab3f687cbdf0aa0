// The sessions of one model, each in its own worker thread, lent out one run at a time. The first loads on
// first use; another loads only when a run finds every loaded one busy, up to the model's most sessions. A
// run takes whichever session frees up or finishes loading first, so a session still loading never delays
// a run that a loaded one could serve.

/** A loaded session: the worker it lives in and what it reported. */
export interface LoadedReplica { worker: { readonly alive: boolean } }

/** One session slot; `key` names its worker (0 is the model's first worker). */
export interface Replica<L extends LoadedReplica> {
  readonly key: number;
  promise: Promise<L>;
  loaded: L | undefined;
  busy: boolean;
}

export class SessionReplicas<L extends LoadedReplica> {
  private slots: Replica<L>[] = [];
  private waiters: Array<{ resolve: (s: Replica<L>) => void; reject: (e: unknown) => void }> = [];
  /** An extra session failed to load: no more are tried until the model is unloaded. */
  private extraFailed = false;

  constructor(
    readonly max: number,
    private readonly loadOne: (key: number) => Promise<L>,
    private readonly onExtraFailure: (e: unknown) => void = () => {},
  ) {}

  /** The first session (worker key 0), loaded if needed; its failure is the caller's. */
  primary(): Promise<L> {
    this.dropDead();
    return (this.slots.find((s) => s.key === 0) ?? this.startLoad(0)).promise;
  }

  /** The first session if it is loaded and alive. */
  get loadedPrimary(): L | undefined {
    const l = this.slots.find((s) => s.key === 0)?.loaded;
    return l?.worker.alive ? l : undefined;
  }

  get loading(): boolean { return this.slots.some((s) => !s.loaded); }
  /** Sessions loaded and alive. */
  get loadedCount(): number { return this.slots.filter((s) => s.loaded?.worker.alive).length; }

  /** Lends a session for one run; give it back with release(). */
  async acquire(): Promise<Replica<L>> {
    this.dropDead();
    const free = this.takeFree();
    if (free) return free;
    if (!this.slots.some((s) => s.key === 0)) {
      // Nothing loaded: the first session's failure is this run's failure.
      await this.startLoad(0).promise;
      const first = this.takeFree();
      if (first) return first;
    } else if (this.slots.length < this.max && !this.extraFailed && !this.loading) {
      this.startLoad(this.freeKey());
    }
    return new Promise<Replica<L>>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Gives a session back: the longest waiting run gets it. */
  release(slot: Replica<L>): void {
    slot.busy = false;
    if (!this.slots.includes(slot)) return;
    if (!slot.loaded?.worker.alive) {
      // Its worker died: forget it; a waiter starts over (loading a fresh one if none is left).
      this.slots = this.slots.filter((s) => s !== slot);
      const w = this.waiters.shift();
      if (w) this.acquire().then(w.resolve, w.reject);
      return;
    }
    this.handOver(slot);
  }

  /** Forgets every session; returns the loaded ones (and pending loads) for the caller to release. */
  takeAll(): Array<Promise<L | undefined>> {
    const all = this.slots.map((s) => s.promise.catch(() => undefined));
    this.slots = [];
    this.extraFailed = false;
    const err = new Error('the model was unloaded');
    for (const w of this.waiters.splice(0)) w.reject(err);
    return all;
  }

  private takeFree(): Replica<L> | undefined {
    const s = this.slots.find((x) => x.loaded && !x.busy);
    if (s) s.busy = true;
    return s;
  }

  private handOver(s: Replica<L>): void {
    const w = this.waiters.shift();
    if (!w) return;
    s.busy = true;
    w.resolve(s);
  }

  private freeKey(): number {
    let k = 0;
    while (this.slots.some((s) => s.key === k)) k++;
    return k;
  }

  private startLoad(key: number): Replica<L> {
    const p = this.loadOne(key);
    const slot: Replica<L> = { key, promise: p, loaded: undefined, busy: false };
    this.slots.push(slot);
    p.then((l) => {
      if (!this.slots.includes(slot)) return;
      slot.loaded = l;
      this.handOver(slot);
    }, (e: unknown) => {
      if (!this.slots.includes(slot)) return;
      this.slots = this.slots.filter((s) => s !== slot);
      if (key > 0) this.onExtraFailure(e);
      if (key > 0) this.extraFailed = true;
      // Runs waiting on a first session that failed fail with it; with an extra one they wait for the rest.
      if (key === 0 && this.slots.length === 0) for (const w of this.waiters.splice(0)) w.reject(e);
    });
    return slot;
  }

  /** Idle sessions whose worker died are forgotten (a busy one is forgotten when it is given back). */
  private dropDead(): void {
    this.slots = this.slots.filter((s) => s.busy || !s.loaded || s.loaded.worker.alive);
  }
}
