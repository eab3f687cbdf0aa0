// Reused memory for decoded pixels. Every photo a request decodes needs width * height * 3 bytes (0.9 MB for
// 640x480); new memory each time is memory V8 counts as external, and under load that count alone set off its
// young and full collections, all "external memory pressure" (docs/capacity.md, "Photo memory"). A caller
// that knows when it is done with the pixels takes them from here and
// gives them back; anything not given back is simply collected.
export class PixelPool {
  private readonly free: Buffer[] = [];
  private freeBytes = 0;
  /** The memory take() handed out and not yet given back: give() accepts nothing else, and nothing twice. */
  private readonly lent = new WeakSet<ArrayBufferLike>();

  /**
   * @param maxBufferBytes largest buffer kept (a larger image gets memory of its own)
   * @param maxIdleBytes most memory kept while unused
   */
  constructor(
    readonly maxBufferBytes: number,
    readonly maxIdleBytes: number,
  ) {}

  /** Memory for `bytes` bytes (a view of exactly that length), or undefined where the pool keeps none that size. */
  take(bytes: number): Buffer | undefined {
    if (!(bytes > 0) || bytes > this.maxBufferBytes) return undefined;
    // The smallest free buffer that holds it, so a large one stays for a large image.
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const b = this.free[i]!;
      if (b.length >= bytes && (best < 0 || b.length < this.free[best]!.length)) best = i;
    }
    let buf: Buffer;
    if (best < 0) buf = Buffer.allocUnsafeSlow(bytes);
    else {
      buf = this.free.splice(best, 1)[0]!;
      this.freeBytes -= buf.length;
    }
    this.lent.add(buf.buffer);
    return buf.subarray(0, bytes);
  }

  /**
   * Gives back what take() returned (any view of it), once; other memory is ignored. Kept while the idle
   * memory stays under its bound. The caller must be done with it: the next take() may write over it.
   */
  give(view: Uint8Array): void {
    if (!this.lent.has(view.buffer)) return;
    this.lent.delete(view.buffer);
    const whole = Buffer.from(view.buffer, 0, view.buffer.byteLength);
    if (whole.length > this.maxIdleBytes) return;
    // Over the bound the smallest idle buffers go first: the new one is kept only if it is not smaller than all.
    while (this.freeBytes + whole.length > this.maxIdleBytes && this.free.length > 0) {
      let smallest = 0;
      for (let i = 1; i < this.free.length; i++) if (this.free[i]!.length < this.free[smallest]!.length) smallest = i;
      if (this.free[smallest]!.length > whole.length) return;
      this.freeBytes -= this.free.splice(smallest, 1)[0]!.length;
    }
    this.free.push(whole);
    this.freeBytes += whole.length;
  }

  /** Idle buffers and their bytes (tests read it). */
  get idle(): { buffers: number; bytes: number } {
    return { buffers: this.free.length, bytes: this.freeBytes };
  }
}

/**
 * The server's pool for request images: buffers up to 32 MB (a 10-megapixel photo), at most 64 MB idle.
 * A request under load holds one from decode to its answer, so idle memory follows the requests in flight.
 */
export const requestPixels = new PixelPool(32 * 1024 * 1024, 64 * 1024 * 1024);

/**
 * Gives a pooled image's pixels back once `work` on them has settled, and returns `work`. Why after it settles
 * and not when the caller stops waiting: a request whose client left returns early, while a model run it
 * started still reads the pixels (a run not yet started is dropped, and settles `work` then).
 */
export function releaseAfter<T>(image: { release?: () => void }, work: Promise<T>): Promise<T> {
  if (image.release) work.then(image.release, image.release);
  return work;
}

/**
 * Promise.all that settles only when every branch has: the first failure (in order) or all values. For work
 * whose branches read the same pooled pixels, so that its promise (what releaseAfter waits on) never settles
 * while one branch still reads them.
 */
export async function allSettled<T extends readonly unknown[]>(work: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
