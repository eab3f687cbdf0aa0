// A subscriber that stays with a task's stream to its end (bench/suites/failover.ts): it notes when each frame
// chunk arrives, and when told (after each kill) it drops its connection at whatever byte it is at and
// reconnects with Last-Event-ID set to the bytes it holds, as a client whose connection broke would. Its bytes
// must then be exactly the archive's: a reconnect that repeated or skipped a byte would show.
import type { TestApp } from '../test/helpers/app.js';

export class StreamFollower {
  private parts: Buffer[] = [];
  private held = 0;
  private pending = Buffer.alloc(0);
  private ac = new AbortController();
  /** Arrival time (ms since the epoch) of each frame chunk, by its place among the frame chunks. */
  readonly frameArrivals: number[] = [];
  /** Each reconnect: the offset asked for and the X-Stream-Offset the answer started at. */
  readonly reconnects: Array<{ asked: number; answered: number }> = [];
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  readonly done: Promise<Buffer>;
  private ended = false;

  constructor(
    private readonly t: TestApp,
    readonly taskId: string,
    timeoutMs: number,
  ) {
    this.done = this.follow(timeoutMs);
  }

  get bytes(): Buffer {
    return Buffer.concat(this.parts);
  }

  get frames(): number {
    return this.frameArrivals.length;
  }

  /** Resolves once `n` frame chunks arrived, or the stream ended (then `frames` says how many came). */
  untilFrames(n: number): Promise<void> {
    if (this.frames >= n || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** Drops the connection now; the reading loop reconnects from the bytes held. */
  reconnect(): void {
    this.ac.abort();
  }

  private async follow(timeoutMs: number): Promise<Buffer> {
    const until = Date.now() + timeoutMs;
    try {
      for (let first = true; ; first = false) {
        if (Date.now() > until) throw new Error(`the stream of ${this.taskId} did not end within ${timeoutMs} ms`);
        this.ac = new AbortController();
        const timer = setTimeout(() => this.ac.abort(), until - Date.now());
        const headers: Record<string, string> = { authorization: `Bearer ${this.t.key}` };
        if (!first) headers['last-event-id'] = String(this.held);
        try {
          const res = await fetch(`${this.t.url}/v1/video/tasks/${this.taskId}/stream`, {
            headers,
            signal: this.ac.signal,
          });
          if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`);
          if (!first)
            this.reconnects.push({ asked: this.held, answered: Number(res.headers.get('x-stream-offset') ?? NaN) });
          const reader = res.body!.getReader();
          for (;;) {
            const r = await reader.read();
            if (r.done) return this.bytes;
            this.take(Buffer.from(r.value));
          }
        } catch (e) {
          if (!this.ac.signal.aborted) throw e;
        } finally {
          clearTimeout(timer);
        }
      }
    } finally {
      this.ended = true;
      for (const w of this.waiters.splice(0)) w.resolve();
    }
  }

  private take(b: Buffer): void {
    const now = Date.now();
    this.parts.push(b);
    this.held += b.length;
    this.pending = Buffer.concat([this.pending, b]);
    let i: number;
    while ((i = this.pending.indexOf('\n\n')) >= 0) {
      const ev = this.pending.subarray(0, i).toString('utf8');
      this.pending = this.pending.subarray(i + 2);
      if (ev.startsWith('data: {') && JSON.parse(ev.slice(6)).finish_reason === null) this.frameArrivals.push(now);
    }
    this.waiters = this.waiters.filter((w) => (this.frames >= w.n ? (w.resolve(), false) : true));
  }
}
