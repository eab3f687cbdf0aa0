// Reads a sightflow task stream (text/event-stream) event by event, counting bytes, so a reader that loses
// its connection can resume at the exact byte offset (Last-Event-ID / ?offset=, docs/video.md, "The stream").
// Events end with a blank line; `data:` lines carry the payload, `:` lines are comments (heartbeats).

export interface SseEvent {
  /** The joined data lines; null for a comment-only event (a heartbeat). */
  data: string | null;
  /** Stream offset just after this event. */
  end: number;
}

const LF2 = Buffer.from('\n\n');

export async function* sseEvents(body: AsyncIterable<Uint8Array>, startOffset = 0): AsyncGenerator<SseEvent> {
  let pending = Buffer.alloc(0);
  let offset = startOffset;
  for await (const chunk of body) {
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
    let at: number;
    while ((at = pending.indexOf(LF2)) >= 0) {
      const raw = pending.subarray(0, at).toString('utf8');
      pending = pending.subarray(at + 2);
      offset += at + 2;
      const data = raw
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
      yield { data: data.length ? data.join('\n') : null, end: offset };
    }
  }
}
