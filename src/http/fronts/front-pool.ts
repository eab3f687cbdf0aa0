// `serve`'s side of its front processes: starts SIGHTFLOW_HTTP_FRONTS of them on the server's port, answers
// their key lookups from the database and their image routes' calls with the use cases themselves (the rate
// limit taken here, so a key has one bucket), counts their requests in the metrics, restarts one that dies,
// and stops them first when `serve` stops (they finish their requests, which need this process to answer).
import { fork, type ChildProcess } from 'node:child_process';
import { errors, isApiError } from '../../base/errors.js';
import type { Logger } from '../../base/log.js';
import type { RateLimiter } from '../../auth/rate-limit.js';
import type { Projects } from '../../auth/projects.js';
import { recordSpan } from '../../tracing/spans.js';
import type { Caller } from '../../usage/billing.js';
import {
  asBuffer,
  toWire,
  type FrontMessage,
  type ObservedRequest,
  type OwnerMessage,
  type VisionCalls,
} from './front-wire.js';

/** A front that does not listen within this time fails the start (it loads the HTTP code only). */
const START_TIMEOUT_MS = 60_000;
/** A front that died is started again after this pause (not in a loop when it dies at once). */
const RESTART_AFTER_MS = 1000;
/** A front that has not exited this long after its drain time is killed. */
const EXIT_GRACE_MS = 2000;
/** The 429 that emptied a key's bucket waits at most this long for the fronts to have heard of it. */
const HEAR_TIMEOUT_MS = 1000;

export interface FrontPoolDeps {
  /** Front processes to start beside this one. */
  count: number;
  /** The CLI entry the fronts run (`<entry> __front`). */
  entry: string;
  host: string;
  port: number;
  /** This process's loopback port, where the fronts pass every route that is not an image route. */
  ownerPort: number;
  log: Logger;
  calls: VisionCalls;
  keys: Pick<Projects, 'keyByHash' | 'touchKey'>;
  rateLimiter: RateLimiter;
  observe: (r: ObservedRequest) => void;
  drainMs: number;
}

interface Front {
  child: ChildProcess;
  calls: Map<number, AbortController>;
  /** It has said 'hello' (it takes in 'limited' messages from now on, and answers them). */
  hello: boolean;
}

/** A 'limited' message on its way: the fronts that have not said 'heard' yet, and the wait's end. */
interface Telling {
  fronts: Set<Front>;
  done: () => void;
}

export class FrontPool {
  private readonly fronts = new Set<Front>();
  private stopping = false;
  /** Key id -> until when (performance.now()) the fronts were told its bucket is empty. */
  private readonly toldEmpty = new Map<string, number>();
  /** 'limited' messages by seq, until every front has heard. */
  private readonly telling = new Map<number, Telling>();
  /** Key id -> the wait for the fronts to hear of its emptying, while it lasts. */
  private readonly hearing = new Map<string, Promise<void>>();
  private nextSeq = 1;

  constructor(private readonly d: FrontPoolDeps) {}

  get port(): number {
    return this.d.port;
  }

  get pids(): number[] {
    return [...this.fronts].map((f) => f.child.pid!);
  }

  start(): Promise<void> {
    return Promise.all(Array.from({ length: this.d.count }, () => this.spawn())).then(() => {});
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.fronts].map(
        (f) =>
          new Promise<void>((resolve) => {
            if (f.child.exitCode !== null || f.child.signalCode !== null) return resolve();
            const kill = setTimeout(() => f.child.kill('SIGKILL'), this.d.drainMs + EXIT_GRACE_MS);
            f.child.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            send(f.child, { t: 'stop' });
          }),
      ),
    );
  }

  private spawn(): Promise<void> {
    const args = [
      '__front',
      '--owner-port',
      String(this.d.ownerPort),
      '--port',
      String(this.d.port),
      '--host',
      this.d.host,
    ];
    // The environment is inherited: a front reads the settings `serve` read, its port and host aside.
    const child = fork(this.d.entry, args, {
      serialization: 'advanced',
      stdio: 'inherit',
    });
    const front: Front = { child, calls: new Map(), hello: false };
    this.fronts.add(front);
    return new Promise((resolve, reject) => {
      let ready = false;
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`a front process did not listen within ${START_TIMEOUT_MS / 1000} s`));
      }, START_TIMEOUT_MS);
      child.on('message', (m: FrontMessage) => {
        if (m.t === 'ready') {
          ready = true;
          clearTimeout(timer);
          this.d.log.info({ pid: m.pid, port: this.d.port }, 'front process listening');
          resolve();
        } else this.receive(front, m);
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        this.fronts.delete(front);
        for (const c of front.calls.values()) c.abort(new Error('the front process went away'));
        for (const seq of [...this.telling.keys()]) this.heard(front, seq);
        if (!ready) return reject(new Error(`a front process exited (${code ?? signal}) before it listened`));
        if (this.stopping) return;
        this.d.log.error({ pid: child.pid, code, signal }, 'front process died; starting another');
        setTimeout(() => {
          if (!this.stopping)
            this.spawn().catch((e: unknown) => this.d.log.error({ err: e }, 'front process did not restart'));
        }, RESTART_AFTER_MS).unref();
      });
    });
  }

  private receive(front: Front, m: FrontMessage): void {
    const { child } = front;
    switch (m.t) {
      case 'hello': {
        // Before it listens: a front started while keys are empty (one that replaced a front that died) refuses
        // them from its first request.
        front.hello = true;
        const now = performance.now();
        const limited = [...this.toldEmpty]
          .filter(([, until]) => until > now)
          .map(([keyId, until]) => ({ keyId, forMs: until - now }));
        send(child, { t: 'welcome', limited });
        return;
      }
      case 'heard':
        return this.heard(front, m.seq);
      case 'key':
        this.d.keys.keyByHash(asBuffer(m.hash)).then(
          (row) => send(child, { t: 'key', id: m.id, row }),
          (e: unknown) => send(child, { t: 'key', id: m.id, row: null, error: (e as Error).message }),
        );
        return;
      case 'take':
        try {
          this.d.rateLimiter.take(m.keyId);
        } catch {
          // Already empty: the request was answered by the front, so there is nothing to refuse; the fronts
          // are told, so the next ones are refused there.
          this.empty(m.keyId);
        }
        return;
      case 'touch':
        this.d.keys.touchKey(m.keyId).catch(() => {});
        return;
      case 'requests': {
        for (const r of m.records) this.d.observe(r);
        // The front's clock to this process's: both count from their own performance.timeOrigin.
        const shift = (m.origin ?? performance.timeOrigin) - performance.timeOrigin;
        for (const s of m.spans ?? []) recordSpan({ ...s, startMs: s.startMs + shift, endMs: s.endMs + shift });
        return;
      }
      case 'abort':
        front.calls.get(m.id)?.abort(new Error('the client went away'));
        return;
      case 'call':
        return this.call(front, m);
    }
  }

  private call(front: Front, m: Extract<FrontMessage, { t: 'call' }>): void {
    const controller = new AbortController();
    front.calls.set(m.id, controller);
    const base = this.d.log;
    let log: Logger | undefined;
    const caller: Caller = {
      projectId: m.projectId,
      keyId: m.keyId,
      signal: controller.signal,
      traceparent: m.traceparent,
      requestId: m.requestId,
      get log() {
        return (log ??= base.child({ requestId: m.requestId }));
      },
    };
    const body = m.body as { image_base64?: unknown };
    if (body.image_base64 instanceof Uint8Array) body.image_base64 = asBuffer(body.image_base64);
    let work: Promise<unknown>;
    try {
      this.d.rateLimiter.take(m.keyId);
      work = this.d.calls[m.op](caller, body);
    } catch (e) {
      // The 429 goes out once every front has heard, so a client that has seen it is refused by every front.
      const told = isApiError(e) && e.status === 429 ? this.empty(m.keyId) : undefined;
      work = told
        ? told.then(() => {
            throw e;
          })
        : Promise.reject(e);
    }
    work.then(
      (json) => {
        front.calls.delete(m.id);
        send(front.child, { t: 'done', id: m.id, json });
      },
      (e: unknown) => {
        front.calls.delete(m.id);
        // Answered even when the client went away, so the front lets go of the call.
        if (!isApiError(e) && !controller.signal.aborted)
          base.error({ requestId: m.requestId, err: e, op: m.op }, 'unhandled error');
        send(front.child, { t: 'fail', id: m.id, error: toWire(isApiError(e) ? e : errors.internal()) });
      },
    );
  }

  /**
   * The key's bucket refused a request: every front hears how long it stays empty, once per emptying (a front
   * that has heard refuses the key itself meanwhile, so the refusals stop coming here). Returns the wait for
   * every front that has said 'hello' to have heard (bounded by HEAR_TIMEOUT_MS), or undefined when none is
   * left to hear.
   */
  private empty(keyId: string): Promise<void> | undefined {
    const now = performance.now();
    const forMs = this.d.rateLimiter.msUntilToken(keyId, now);
    // Told already: the time a bucket next holds a request does not move while it refuses (1 ms for rounding).
    if (forMs <= 0 || (this.toldEmpty.get(keyId) ?? 0) + 1 >= now + forMs) return this.hearing.get(keyId);
    for (const [k, until] of this.toldEmpty) if (until <= now) this.toldEmpty.delete(k);
    // Fronts that have not said 'hello' yet get this in their 'welcome'.
    this.toldEmpty.set(keyId, now + forMs);
    const fronts = new Set([...this.fronts].filter((f) => f.hello && f.child.connected));
    if (fronts.size === 0) return undefined;
    const seq = this.nextSeq++;
    const wait = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.d.log.warn({ keyId, fronts: fronts.size }, 'fronts slow to hear of a rate limit');
        done();
      }, HEAR_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        this.telling.delete(seq);
        if (this.hearing.get(keyId) === wait) this.hearing.delete(keyId);
        resolve();
      };
      this.telling.set(seq, { fronts, done });
    });
    this.hearing.set(keyId, wait);
    for (const f of fronts) send(f.child, { t: 'limited', keyId, forMs, seq });
    return wait;
  }

  /** The front has heard the 'limited' message `seq` (or has gone). */
  private heard(front: Front, seq: number): void {
    const t = this.telling.get(seq);
    if (t?.fronts.delete(front) && t.fronts.size === 0) t.done();
  }
}

function send(child: ChildProcess, m: OwnerMessage): void {
  // A front that exited meanwhile takes nothing; its exit handler deals with what it was doing.
  if (child.connected) child.send(m, (e) => void e);
}
