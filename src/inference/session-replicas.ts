// The sessions of one model, each in its own worker thread, lent out one run at a time. The first loads on
// first use; another loads only when a run finds every loaded one busy, up to the model's most sessions. A
// run takes whichever session frees up or finishes loading first, so a session still loading never delays
// a run that a loaded one could serve.
// With `wide`, the first session (key 0, every intra-op thread) serves runs that come one at a time, and
// runs that overlap go to up to `max` narrow sessions (keys 1..max) that split the cores between them: once
// they are all loaded the wide one waits while runs overlap, so the cores are never asked for more threads
// than they have. Why: on CPU one session's threads sit idle in every operator that does not split well, so
// two 1-thread sessions on 2 cores made more images/s of the built-in detector and of yolov8n-int8 than one
// 2-thread session (bench serve's ceiling), while one client alone is fastest on the wide one
// (docs/capacity.md, "Sessions by cores").

/** A loaded session: the worker it lives in and what it reported. */
export interface LoadedReplica {
  worker: { readonly alive: boolean };
}

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
  /** Key 0 serves runs one at a time only; overlapping runs use keys 1..max (needs max >= 2). */
  readonly wide: boolean;
  private readonly demand: () => number;
  private readonly holdMs: number;
  /** When a run last found others beside it. */
  private overlapAt = -Infinity;

  private maxSessions: number;
  /** A session past the most after resize(), given back by its run: the caller releases it. */
  private readonly onDropped: (loaded: L, key: number) => void;

  /**
   * `wide`: see above. `demand`: runs that want a session now, the caller's included (default: those lent
   * out or waiting here, plus the caller); a queue in front of this knows of runs not yet asking. `holdMs`:
   * after runs last overlapped, a run alone still takes a narrow session for this long, so a brief lull
   * between overlapping runs does not put one on the wide session beside the narrow ones. `onDropped`: a
   * session resize() let go that was lent out, once its run gave it back.
   */
  constructor(
    max: number,
    private readonly loadOne: (key: number) => Promise<L>,
    private readonly onExtraFailure: (e: unknown) => void = () => {},
    opts: { wide?: boolean; demand?: () => number; holdMs?: number; onDropped?: (loaded: L, key: number) => void } = {},
  ) {
    this.maxSessions = max;
    this.wide = (opts.wide ?? false) && max >= 2;
    this.demand = opts.demand ?? (() => 1);
    this.holdMs = opts.holdMs ?? 0;
    this.onDropped = opts.onDropped ?? (() => {});
  }

  /** Most sessions. */
  get max(): number {
    return this.maxSessions;
  }

  /**
   * A new most (sessions alike only, not `wide`). Rising, further sessions load as runs overlap, as before.
   * Falling, the sessions past it are let go: those free or loading now are returned for the caller to
   * release (as takeAll's), those lent out when their run gives them back (`onDropped`).
   */
  resize(max: number): Array<{ key: number; loaded: Promise<L | undefined> }> {
    if (this.wide) throw new Error('a wide model cannot change its sessions in place');
    this.maxSessions = Math.max(1, max);
    this.extraFailed = false;
    const gone = this.slots.filter((s) => s.key >= this.maxSessions && !s.busy);
    this.slots = this.slots.filter((s) => !gone.includes(s));
    return gone.map((s) => ({ key: s.key, loaded: s.promise.catch(() => undefined) }));
  }

  /** Worker keys this model may use (0..keys-1). */
  get keys(): number {
    return this.wide ? this.max + 1 : this.max;
  }

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

  /** Every session loaded and alive, by key. */
  get loaded(): L[] {
    return this.slots
      .filter((s) => s.loaded?.worker.alive)
      .sort((a, b) => a.key - b.key)
      .map((s) => s.loaded!);
  }

  get loading(): boolean {
    return this.slots.some((s) => !s.loaded);
  }
  /** Sessions loaded and alive. */
  get loadedCount(): number {
    return this.slots.filter((s) => s.loaded?.worker.alive).length;
  }

  /** Lends a session for one run; give it back with release(). */
  async acquire(): Promise<Replica<L>> {
    this.dropDead();
    if (this.wide) return this.acquireWide();
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
    return this.wait();
  }

  private async acquireWide(): Promise<Replica<L>> {
    const now = performance.now();
    if (this.slots.some((s) => s.busy) || this.waiters.length > 0 || this.demand() > 1) this.overlapAt = now;
    // Nothing loaded yet: the wide session first, whatever the load (its failure is then this run's).
    if (this.slots.length === 0 || now - this.overlapAt > this.holdMs) {
      // A run alone: the wide session (a free narrow one while the wide one is not there).
      const free = this.takeFree((s) => s.key === 0) ?? this.takeFree();
      if (free) return free;
      if (!this.slots.some((s) => s.key === 0)) {
        const load = this.startLoad(0).promise;
        // Nothing else to run on: the wide session's failure is this run's failure.
        if (this.slots.length === 1) await load;
        const first = this.takeFree((s) => s.key === 0) ?? this.takeFree();
        if (first) return first;
      }
      return this.wait();
    }
    const narrow = this.takeFree((s) => s.key !== 0);
    if (narrow) return narrow;
    if (this.narrowCount() < this.max && !this.extraFailed && !this.slots.some((s) => s.key !== 0 && !s.loaded)) {
      this.startLoad(this.freeKey(1));
    }
    // Until every narrow session is loaded, the wide one serves rather than keeping a run waiting.
    if (!this.narrowComplete()) {
      const wide = this.takeFree((s) => s.key === 0);
      if (wide) return wide;
    }
    return this.wait();
  }

  private wait(): Promise<Replica<L>> {
    return new Promise<Replica<L>>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private narrowCount(): number {
    return this.slots.filter((s) => s.key !== 0).length;
  }

  /** Every narrow session is loaded: overlapping runs leave the wide one alone (while one is missing, it serves). */
  private narrowComplete(): boolean {
    return this.slots.filter((s) => s.key !== 0 && s.loaded).length >= this.max;
  }

  /** Gives a session back: the longest waiting run gets it. */
  release(slot: Replica<L>): void {
    slot.busy = false;
    if (!this.slots.includes(slot)) return;
    if (slot.key >= this.maxSessions && slot.loaded) {
      // Past the most since resize(): let go rather than lent again.
      this.slots = this.slots.filter((s) => s !== slot);
      this.onDropped(slot.loaded, slot.key);
      return;
    }
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
    this.overlapAt = -Infinity;
    const err = new Error('the model was unloaded');
    for (const w of this.waiters.splice(0)) w.reject(err);
    return all;
  }

  private takeFree(which: (s: Replica<L>) => boolean = () => true): Replica<L> | undefined {
    const s = this.slots.find((x) => x.loaded && !x.busy && which(x));
    if (s) s.busy = true;
    return s;
  }

  private handOver(s: Replica<L>): void {
    if (this.waiters.length === 0) return;
    // Waiting runs overlap: the wide session stays free for them only while narrow ones are missing.
    if (this.wide && s.key === 0 && this.narrowComplete()) return;
    const w = this.waiters.shift()!;
    s.busy = true;
    w.resolve(s);
  }

  private freeKey(from = 0): number {
    let k = from;
    while (this.slots.some((s) => s.key === k)) k++;
    return k;
  }

  private startLoad(key: number): Replica<L> {
    const p = this.loadOne(key);
    const slot: Replica<L> = { key, promise: p, loaded: undefined, busy: false };
    this.slots.push(slot);
    p.then(
      (l) => {
        if (!this.slots.includes(slot)) return;
        slot.loaded = l;
        this.handOver(slot);
      },
      (e: unknown) => {
        if (!this.slots.includes(slot)) return;
        this.slots = this.slots.filter((s) => s !== slot);
        if (key > 0) this.onExtraFailure(e);
        if (key > 0) this.extraFailed = true;
        // Runs that waited for it take whatever is free now (the wide session, which no longer waits for it).
        if (key > 0) for (const s of this.slots) if (s.loaded && !s.busy) this.handOver(s);
        // Runs waiting on a first session that failed fail with it; with an extra one they wait for the rest.
        if (key === 0 && this.slots.length === 0) for (const w of this.waiters.splice(0)) w.reject(e);
      },
    );
    return slot;
  }

  /** Idle sessions whose worker died are forgotten (a busy one is forgotten when it is given back). */
  private dropDead(): void {
    this.slots = this.slots.filter((s) => s.busy || !s.loaded || s.loaded.worker.alive);
  }
}
