// Server-sent events with backpressure: write() resolves once uWS has taken the bytes into the socket
// (or its buffer drained below the watermark), so a slow reader holds at most one pending chunk in memory.
import type { HttpResponse } from './uws.js';
import { statusLine, type ResState } from './send.js';

/**
 * Most bytes handed to uWS in one corked write: its cork buffer holds 16 KB, which a piece must share with
 * the chunk's framing and, on the first write, the status line and headers.
 */
export const MAX_PIECE = 8 * 1024;

export class SseWriter {
  private waiting: (() => void) | null = null;
  private started = false;
  private ended = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly st: ResState,
  ) {
    st.done = true;
    st.status = 200;
    st.onAbort.push(() => this.release());
  }

  /** Calls fn when the client goes away (not when the response ends). */
  onAbort(fn: () => void): void {
    this.st.onAbort.push(fn);
  }

  get closed(): boolean {
    return this.st.aborted || this.ended;
  }

  /** Sends the status line and headers (text/event-stream, no caching, keep the connection). */
  open(headers: Record<string, string> = {}): void {
    if (this.started || this.st.aborted) return;
    this.started = true;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(200));
      this.res.writeHeader('Content-Type', 'text/event-stream; charset=utf-8');
      this.res.writeHeader('Cache-Control', 'no-cache, no-transform');
      this.res.writeHeader('X-Accel-Buffering', 'no');
      for (const [k, v] of Object.entries(headers)) this.res.writeHeader(k, v);
    });
  }

  /** Writes bytes; resolves when the socket can take more. Resolves false when the client is gone. */
  async write(chunk: string | Buffer): Promise<boolean> {
    if (this.send(chunk)) return true;
    if (this.closed) return false;
    await this.drained();
    return !this.closed;
  }

  /**
   * Writes bytes now (uWS keeps what the socket cannot take yet). False when the client is gone or the
   * socket is over its watermark: then write nothing more until drained() resolves.
   */
  send(chunk: string | Buffer): boolean {
    if (this.closed) return false;
    if (!this.started) this.open();
    // A string that fits even as 3-byte UTF-8 goes as it is (no copy); anything larger is cut as bytes.
    const whole = typeof chunk === 'string' ? chunk.length * 3 <= MAX_PIECE : chunk.length <= MAX_PIECE;
    if (whole) {
      this.st.bytesOut += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      let ok = false;
      this.res.cork(() => {
        ok = this.res.write(chunk);
      });
      return ok;
    }
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.st.bytesOut += bytes.length;
    let ok = true;
    // One piece a cork, each small enough to fit the loop's cork buffer with its chunk framing (and the headers
    // on the first write). Why: a write that does not fit is sent past the cork buffer, and when flushing what
    // was corked before it fails (the reader is behind), this uWS release drops that write: its chunk header
    // went out without its bytes and the stream was corrupt from there on (seen under load with 16 KB events).
    for (let at = 0; at < bytes.length; at += MAX_PIECE) {
      const piece = bytes.subarray(at, at + MAX_PIECE);
      this.res.cork(() => {
        ok = this.res.write(piece) && ok;
      });
    }
    return ok;
  }

  /** Resolves once the socket can take more after a send() that returned false, or the client is gone. */
  drained(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiting = resolve;
      this.res.onWritable(() => {
        this.release();
        return true;
      });
    });
  }

  end(): void {
    if (this.closed) return;
    if (!this.started) this.open();
    this.ended = true;
    this.res.cork(() => this.res.end());
    this.release();
  }

  private release(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }
}
