// Where log lines go: stdout, through one buffer. Lines are copied into a preallocated buffer and written
// with one write(2) when it fills or FLUSH_MS after the first unwritten line, whichever comes first, and
// synchronously at exit. pino's own sonic-boom destination re-measures its whole pending string on every
// write (more CPU than the rest of a small request) and, with a minimum length, holds an idle server's lines
// indefinitely; this sink copies each line once and is never more than FLUSH_MS behind
// (docs/capacity.md, "A small request's CPU").
import { writeSync } from 'node:fs';

const FLUSH_MS = 100;
const SIZE = 64 * 1024;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Buffer.write without its argument checks (a measurable share of a small request's CPU): Node's own method. */
type Utf8Writable = Buffer & { utf8Write(s: string, offset: number): number };

export class LogSink {
  /** Where reserve()'s caller writes its bytes (a field, not a getter: read on every request line). */
  readonly buffer = Buffer.allocUnsafe(SIZE);
  private used = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly fd: number,
    private readonly bufferMs = FLUSH_MS,
  ) {
    process.on('exit', () => this.flushSync());
  }

  /**
   * For a writer that puts bytes straight into the buffer (the request log line): room for `bytes` more
   * (at most LogSink.SIZE), flushing first when they would not fit. Write into `buffer` from the returned
   * offset, then commit() the offset after the last byte.
   */
  reserve(bytes: number): number {
    if (this.used + bytes > SIZE) this.flushSync();
    return this.used;
  }

  static readonly SIZE = SIZE;

  commit(end: number): void {
    this.used = end;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flushSync(), this.bufferMs);
      this.timer.unref();
    }
  }

  write(line: string): boolean {
    // A UTF-16 unit is at most 3 UTF-8 bytes: make room for the worst case.
    if (this.used + line.length * 3 > SIZE) {
      this.flushSync();
      if (line.length * 3 > SIZE) {
        this.writeAll(Buffer.from(line));
        return true;
      }
    }
    this.used += (this.buffer as Utf8Writable).utf8Write(line, this.used);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flushSync(), this.bufferMs);
      this.timer.unref();
    }
    return true;
  }

  /** pino calls flush(); it is synchronous here, so the lines are written when it returns. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  flushSync(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.used === 0) return;
    const n = this.used;
    this.used = 0;
    this.writeAll(this.buffer.subarray(0, n));
  }

  private writeAll(b: Uint8Array): void {
    let off = 0;
    let tries = 0;
    while (off < b.length) {
      try {
        off += writeSync(this.fd, b, off, b.length - off);
      } catch (e) {
        // stdout may be a non-blocking pipe: wait for the reader a moment, then give up on the rest rather
        // than block the service forever on a reader that is gone.
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries > 1000) return;
        Atomics.wait(sleeper, 0, 0, 1);
      }
    }
  }
}
