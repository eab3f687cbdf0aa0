// Event ids for EventSource clients (`?event_ids=true` on a task stream). The archive stores the stream's
// exact bytes without `id:` lines, so byte offsets stay the one resume position. This rewriter adds
// `id: <n>` to every event as it is sent, n being the archive offset right after that event: a browser
// EventSource hands n back as Last-Event-ID on reconnect and resumes exactly at the next event. Ids are
// derived from offsets, never stored, so responses without the parameter are byte-for-byte the archive.

const LF = 0x0a;

/** Reconnection delay announced once at the start of a response with event ids (the SSE `retry:` field). */
export const EVENT_ID_RETRY_MS = 1000;

/**
 * Stateful: feed it the archive bytes from `start` on, in order, in chunks of any size (events may span
 * chunks). An event ends at a blank line (two LFs; the archive never uses CR); the id line goes right
 * before that blank line.
 */
export class EventIdWriter {
  private pos: number;
  /** The previous byte ended a line. */
  private lineStart = true;
  /** The current event has at least one (possibly partial) line. */
  private inEvent = false;

  constructor(start: number) {
    this.pos = start;
  }

  /** The `retry:` block that opens a response (it dispatches nothing and leaves the last event id alone). */
  static preamble(retryMs = EVENT_ID_RETRY_MS): Buffer {
    return Buffer.from(`retry: ${retryMs}\n\n`, 'utf8');
  }

  transform(chunk: Uint8Array): Buffer {
    const out: Buffer[] = [];
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== LF) {
        this.lineStart = false;
        this.inEvent = true;
        continue;
      }
      if (this.lineStart && this.inEvent) {
        out.push(Buffer.from(chunk.buffer, chunk.byteOffset + from, i - from));
        out.push(Buffer.from(`id: ${this.pos + i + 1}\n`, 'utf8'));
        from = i;
        this.inEvent = false;
      } else if (!this.lineStart) {
        this.inEvent = true;
      }
      this.lineStart = true;
    }
    this.pos += chunk.length;
    if (out.length === 0) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    out.push(Buffer.from(chunk.buffer, chunk.byteOffset + from, chunk.length - from));
    return Buffer.concat(out);
  }
}
