// One model's work queue: bounded (a full queue rejects at once with 503 overloaded_error, nothing waits
// without bound) and micro-batching (up to maxBatch items, or whatever arrived within maxWaitMs of the
// first, run as one call). The first item waits for company only where company is to be expected: when it
// came less than maxWaitMs after the item before it. An item that comes alone after a quiet spell (one client,
// a lull) runs as soon as the items submitted in the same turn of the event loop have joined it, rather than
// paying the whole delay for company that is not coming. A model without a batch axis is the same queue with
// maxBatch 1. An item whose AbortSignal fires while it waits is dropped (its caller's client went away; nobody
// wants the answer).
// Two lanes, each bounded by the depth: interactive runs (an API request) go first, background runs (a
// camera's frames) get at least every BACKGROUND_EVERY-th batch while both wait, so a camera's backlog never
// delays an image request and a flood of image requests never stalls a camera.
import { errors } from '../base/errors.js';
import { countRejected, observeQueueWait } from '../metrics/models.js';

/**
 * A batch result for one item that failed on its own (its input could not be made): that caller gets the
 * error, the rest of the batch their outputs.
 */
export class ItemFailed {
  constructor(readonly error: unknown) {}
}

/** Who waits for a run: a client's request, or a background task such as a video camera. */
export type RunPriority = 'interactive' | 'background';

/** While both lanes wait, at least one batch in this many is the background lane's. */
const BACKGROUND_EVERY = 4;

export interface ModelQueueOptions<I = unknown> {
  /** Name used in the 503 message. */
  name: string;
  /** Most items that may wait (not counting the batch that is running). */
  depth: number;
  /** Most items in one call (1 = no batching). */
  maxBatch?: number;
  /** How long the first item of a batch waits for company. */
  maxWaitMs?: number;
  /** Batches run at the same time (ONNX Runtime already uses every intra-op thread, so 1 by default). */
  concurrency?: number;
  /**
   * Interactive inputs made when their batch starts (`deferred` says which) may start this many beyond
   * `concurrency`: such a batch makes its input while the running ones finish, so a session does not wait
   * for it. Background batches never start ahead: an interactive run arriving meanwhile would wait behind one.
   */
  ahead?: number;
  deferred?: (input: I) => boolean;
}

interface Item<I, O> {
  input: I;
  lane: RunPriority;
  at: number;
  /** Milliseconds since the item submitted before it (Infinity for the first). */
  gap: number;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class ModelQueue<I, O> {
  private waiting: Item<I, O>[] = [];
  private background: Item<I, O>[] = [];
  /** Batches dispatched in a row while background items waited and none of them went. */
  private skippedBackground = 0;
  private running = 0;
  /** Callers of whenIdle() waiting for nothing to wait or run. */
  private idleWaiters: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  /** The dispatch of a batch whose first item expects no company, after this turn's items joined it. */
  private soon: NodeJS.Immediate | undefined;
  private lastArrival = -Infinity;
  private maxBatch: number;
  private maxWaitMs: number;
  private depth: number;
  private concurrency: number;
  private readonly ahead: number;

  constructor(
    private readonly opts: ModelQueueOptions<I>,
    private readonly runBatch: (inputs: I[]) => Promise<Array<O | ItemFailed>>,
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 1);
    this.maxWaitMs = Math.max(0, opts.maxWaitMs ?? 0);
    this.depth = opts.depth;
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    this.ahead = opts.deferred ? Math.max(0, opts.ahead ?? 0) : 0;
  }

  /** Most items in one call and the longest a first item waits for company, from now on. */
  setBatch(maxBatch: number, maxWaitMs: number): void {
    this.maxBatch = Math.max(1, maxBatch);
    this.maxWaitMs = Math.max(0, maxWaitMs);
    this.pump();
  }

  /**
   * Most items that may wait in each lane, from now on. Items already waiting past a lower bound stay and run;
   * new ones are refused until their lane is below it.
   */
  setDepth(depth: number): void {
    this.depth = depth;
  }

  /** Batches that may run at once, from now on (the model's sessions): more start at once where items wait. */
  setConcurrency(n: number): void {
    this.concurrency = Math.max(1, n);
    this.pump();
  }

  /** The batching in force: most items in one call, longest wait for company. */
  get batch(): { maxBatch: number; maxWaitMs: number } {
    return { maxBatch: this.maxBatch, maxWaitMs: this.maxWaitMs };
  }

  /** Items waiting to start. */
  get pending(): number {
    return this.waiting.length + this.background.length;
  }
  /** Items waiting to start in one lane (each lane is bounded by the depth on its own). */
  pendingIn(lane: RunPriority): number {
    return lane === 'background' ? this.background.length : this.waiting.length;
  }
  get active(): number {
    return this.running;
  }

  /** Items dropped before they ran because their signal fired. */
  dropped = 0;

  /** Settles once no item waits or runs (at once when none does): a queue being let go drains first. */
  whenIdle(): Promise<void> {
    if (this.pending === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settleIdle(): void {
    if (this.pending > 0 || this.running > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * Queues one item; the promise rejects at once with errors.overloaded when the queue is full, and with the
   * signal's reason when the signal fires before the item starts (a started batch runs to the end).
   */
  submit(input: I, signal?: AbortSignal, priority: RunPriority = 'interactive'): Promise<O> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    try {
      this.checkRoom(priority);
    } catch (e) {
      return Promise.reject(e);
    }
    const lane = priority === 'background' ? this.background : this.waiting;
    const now = performance.now();
    const gap = now - this.lastArrival;
    this.lastArrival = now;
    return new Promise<O>((resolve, reject) => {
      const item: Item<I, O> = {
        input,
        lane: priority,
        at: Date.now(),
        gap,
        resolve,
        reject,
        signal,
      };
      if (signal) {
        item.onAbort = () => {
          const i = lane.indexOf(item);
          if (i < 0) return;
          lane.splice(i, 1);
          this.dropped++;
          reject(signal.reason);
          this.settleIdle();
        };
        signal.addEventListener('abort', item.onAbort, { once: true });
      }
      lane.push(item);
      this.pump();
    });
  }

  /**
   * Throws what submit() would reject with when the lane is full now: a caller checks before preparing an
   * item (decoding an image) so that under overload a refused request costs no more than its refusal.
   */
  checkRoom(priority: RunPriority = 'interactive'): void {
    if (this.pendingIn(priority) < this.depth) return;
    countRejected(this.opts.name, priority);
    throw errors.overloaded(`${this.opts.name} inference`);
  }

  /** Whether another batch may start now: a free slot, or one of the slots ahead for an input made at start. */
  private canStart(): boolean {
    if (this.pending === 0) return false;
    if (this.running < this.concurrency) return true;
    if (this.running >= this.concurrency + this.ahead) return false;
    const [a, , backgroundTurn] = this.nextLanes();
    return !backgroundTurn && this.opts.deferred!(a[0]!.input);
  }

  /** The lane the next batch comes from, then the one that fills it. */
  private nextLanes(): [Item<I, O>[], Item<I, O>[], boolean] {
    const backgroundTurn =
      this.background.length > 0 && (this.waiting.length === 0 || this.skippedBackground >= BACKGROUND_EVERY - 1);
    return backgroundTurn ? [this.background, this.waiting, true] : [this.waiting, this.background, false];
  }

  private pump(): void {
    while (this.canStart()) {
      // Wait for a fuller batch only while a batch could still grow and the first item is fresh.
      const first = Math.min(this.waiting[0]?.at ?? Infinity, this.background[0]?.at ?? Infinity);
      const waited = Date.now() - first;
      if (this.pending < this.maxBatch && waited < this.maxWaitMs) {
        if (this.timer || this.soon) return;
        if (this.nextLanes()[0][0]!.gap < this.maxWaitMs)
          this.timer = setTimeout(() => {
            this.timer = undefined;
            this.dispatch();
          }, this.maxWaitMs - waited);
        else
          this.soon = setImmediate(() => {
            this.soon = undefined;
            this.dispatch();
          });
        return;
      }
      this.dispatch();
    }
  }

  private dispatch(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.soon) {
      clearImmediate(this.soon);
      this.soon = undefined;
    }
    if (!this.canStart()) return;
    const [a, b, backgroundTurn] = this.nextLanes();
    const batch = a.splice(0, this.maxBatch);
    const filled = b.splice(0, this.maxBatch - batch.length);
    batch.push(...filled);
    if (backgroundTurn || filled.length > 0 || this.background.length === 0) this.skippedBackground = 0;
    else this.skippedBackground++;
    observeQueueWait(this.opts.name, batch);
    for (const b of batch) if (b.onAbort) b.signal!.removeEventListener('abort', b.onAbort);
    this.running++;
    // Work a job queues in turn (an OCR job's model runs) takes its request's signal from the job's input, not
    // from an async context: the batch starts in whichever callback freed the queue.
    this.runBatch(batch.map((b) => b.input))
      .then(
        (outs) =>
          batch.forEach((b, i) => {
            const o = outs[i];
            if (o instanceof ItemFailed) b.reject(o.error);
            else b.resolve(o as O);
          }),
        (e) => batch.forEach((b) => b.reject(e)),
      )
      .finally(() => {
        this.running--;
        this.pump();
        this.settleIdle();
      });
  }
}
