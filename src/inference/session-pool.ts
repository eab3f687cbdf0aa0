// The worker threads that own the ONNX sessions: one per model (default) or one shared by all models.
// Workers are unref'd while idle, so they never keep the process alive, and ref'd while a call is in
// flight, so a script awaiting a run is not cut short. A worker that dies fails only the calls it had in
// flight; the next call for its models starts a fresh one (the models reload there).
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker } from './session-wire.js';

export type WorkerMode = 'per-model' | 'shared';
export const WORKER_MODES: readonly WorkerMode[] = ['per-model', 'shared'];

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; what: string };
type Message = ToWorker extends infer M ? (M extends { call: number } ? Omit<M, 'call'> : never) : never;

/**
 * The worker entry beside this file: session-worker.js from dist/; under tsx, session-worker.ts through a
 * small ESM bootstrap that registers tsx in the worker first (Node 20 applies no --import hooks to workers).
 */
function workerEntry(): { url: URL; execArgv: string[] } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { url: new URL('./session-worker.js', here), execArgv: [] };
  const api = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./session-worker.ts', here).href;
  const boot = `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(entry)});`;
  return { url: new URL(`data:text/javascript,${encodeURIComponent(boot)}`), execArgv: [] };
}

export class SessionWorker {
  readonly thread: Worker;
  private readonly pending = new Map<number, Pending>();
  /** Per model, its session's CUDA graphs that stopped at a run and were not taken yet (takeGraphChange). */
  private readonly graphChanges = new Map<string, { on: boolean; note?: string }>();

  /** A model's CUDA graphs that stopped at a run of this worker since the last call, once. */
  takeGraphChange(model: string): { on: boolean; note?: string } | undefined {
    const c = this.graphChanges.get(model);
    if (c) this.graphChanges.delete(model);
    return c ? { on: c.on, ...(c.note ? { note: c.note } : {}) } : undefined;
  }
  private nextCall = 1;
  private closing = false;
  private exited = false;

  constructor(
    readonly name: string,
    onExit: (w: SessionWorker) => void,
  ) {
    const entry = workerEntry();
    this.thread = new Worker(entry.url, { execArgv: entry.execArgv, name: `sightflow-inference:${name}` });
    this.thread.unref();
    this.thread.on('message', (m: FromWorker) => {
      if (m.ok && m.cudaGraph) this.graphChanges.set(m.cudaGraph.model, m.cudaGraph);
      const p = this.pending.get(m.call);
      if (!p) return;
      this.settled(m.call);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.message));
    });
    // 'error' (an exception nobody caught in the worker) is followed by 'exit'; keep its text for the calls.
    let crash = '';
    this.thread.on('error', (e: unknown) => {
      crash = `: ${e instanceof Error ? e.message : String(e)}`;
    });
    this.thread.on('exit', (code) => {
      this.exited = true;
      const why = this.closing
        ? `inference worker ${name} was closed`
        : `inference worker ${name} exited unexpectedly (code ${code})${crash}; it restarts on next use`;
      for (const [call, p] of this.pending) {
        this.pending.delete(call);
        p.reject(new Error(`${p.what} failed: ${why}`));
      }
      onExit(this);
    });
  }

  /** False once the thread has exited (crashed or closed): nothing loaded in it exists any more. */
  get alive(): boolean {
    return !this.exited && !this.closing;
  }

  /** One request; `transfer` lists the ArrayBuffers that move to the worker with it. */
  call<T>(msg: Message, what: string, transfer: ArrayBuffer[] = []): Promise<T> {
    if (!this.alive) return Promise.reject(new Error(`${what} failed: inference worker ${this.name} is not running`));
    const call = this.nextCall++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(call, { resolve: resolve as (v: unknown) => void, reject, what });
      if (this.pending.size === 1) this.thread.ref();
      try {
        this.thread.postMessage({ ...msg, call } as ToWorker, transfer);
      } catch (e) {
        this.settled(call);
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  private settled(call: number): void {
    this.pending.delete(call);
    if (this.pending.size === 0) {
      this.thread.unref();
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private readonly idleWaiters: Array<() => void> = [];

  /**
   * Lets runs in flight finish first (up to graceMs): terminating a thread inside an onnxruntime call
   * aborts the whole process (the binding throws during environment teardown).
   */
  async terminate(graceMs = 10_000): Promise<void> {
    this.closing = true;
    if (this.pending.size > 0 && !this.exited) {
      await Promise.race([
        new Promise<void>((r) => this.idleWaiters.push(r)),
        new Promise<void>((r) => setTimeout(r, graceMs).unref()),
      ]);
    }
    if (!this.exited) await this.thread.terminate();
  }
}

export class SessionPool {
  private readonly workers = new Map<string, SessionWorker>();

  constructor(readonly mode: WorkerMode) {}

  /** The live worker that hosts a model (started here if there is none, or the last one died). */
  workerFor(model: string): SessionWorker {
    const key = this.mode === 'shared' ? 'shared' : model;
    let w = this.workers.get(key);
    if (!w || !w.alive) {
      w = new SessionWorker(key, (dead) => {
        if (this.workers.get(key) === dead) this.workers.delete(key);
      });
      this.workers.set(key, w);
    }
    return w;
  }

  /** Ends the worker that hosts a model (one worker per model only; a shared worker keeps running). */
  async retire(model: string): Promise<void> {
    await this.detach(model)?.terminate();
  }

  /**
   * Takes the worker that hosts a model out of the pool (one worker per model only), for the caller to end: a call
   * for that model from now on starts a fresh worker rather than one about to be ended.
   */
  detach(model: string): SessionWorker | undefined {
    if (this.mode === 'shared') return undefined;
    const w = this.workers.get(model);
    this.workers.delete(model);
    return w;
  }

  /** The running worker threads. */
  get threads(): Worker[] {
    return [...this.workers.values()].filter((w) => w.alive).map((w) => w.thread);
  }

  /** Terminates every worker; calls in flight fail, and a later call starts fresh workers. */
  async close(): Promise<void> {
    const all = [...this.workers.values()];
    this.workers.clear();
    await Promise.all(all.map((w) => w.terminate()));
  }
}
