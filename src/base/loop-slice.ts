// Long synchronous JavaScript (OCR's per-line geometry, decoding) in slices: maybeYield() gives the event loop
// a turn once SLICE_MS of work has passed since the last turn, so other requests are not held up behind it.
import { setImmediate as yieldToLoop } from 'node:timers/promises';

const SLICE_MS = 8;

export class LoopSlice {
  private since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await yieldToLoop();
    this.since = performance.now();
  }
}
