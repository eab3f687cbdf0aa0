// Follows a video task's SSE stream (docs/video.md, "The stream"). EventSource cannot send an Authorization header,
// so this reads the body with fetch and keeps the byte offset itself: after a dropped connection it resumes
// with `Last-Event-ID: <bytes received>`, and the server replays exactly the bytes that were missed. With
// `from` it starts at that archive byte offset instead (a moment's stream_offset) and asks with `?offset=`.
import type { StreamChunk } from './types.js'; // .js: also imported by the Node tests (NodeNext)

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'done' | 'failed';

export interface FollowOptions {
  url: string;
  key: string;
  onChunk(chunk: StreamChunk): void;
  onState(state: StreamState, detail?: string): void;
  /** Archive byte offset to start at (an event's first byte); the default 0 is the stream's start. */
  from?: number;
}

const MAX_BACKOFF_MS = 5000;

export function followTaskStream(opts: FollowOptions): { close(): void; offset(): number } {
  let offset = opts.from ?? 0;
  let closed = false;
  let ctrl: AbortController | null = null;
  // One decoder for the whole stream: a resume continues mid-character as well as mid-event.
  const decoder = new TextDecoder();
  let pending = '';
  let failures = 0;

  const finish = (state: 'done' | 'failed', detail?: string) => {
    if (closed) return;
    closed = true;
    ctrl?.abort();
    opts.onState(state, detail);
  };

  // Events end with a blank line; a trailing partial event waits for the rest of its bytes.
  const consume = (text: string) => {
    pending += text;
    let end: number;
    while (!closed && (end = pending.indexOf('\n\n')) >= 0) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue; // a comment such as ": hb"
      if (data === '[DONE]') return finish('done');
      try {
        opts.onChunk(JSON.parse(data) as StreamChunk);
      } catch {
        /* a malformed event is skipped; the stream itself goes on */
      }
    }
  };

  const connect = async (): Promise<void> => {
    while (!closed) {
      ctrl = new AbortController();
      opts.onState(offset === (opts.from ?? 0) && failures === 0 ? 'connecting' : 'reconnecting');
      try {
        const headers: Record<string, string> = { Authorization: `Bearer ${opts.key}`, Accept: 'text/event-stream' };
        let url = opts.url;
        // The query wins over the header on the server, so a stream started with ?offset= resumes with it too.
        if (opts.from !== undefined) url += `${url.includes('?') ? '&' : '?'}offset=${offset}`;
        else if (offset > 0) headers['Last-Event-ID'] = String(offset);
        const res = await fetch(url, { headers, signal: ctrl.signal, cache: 'no-store' });
        // Past the end of a finished task: everything was already received.
        if (res.status === 416) return finish('done');
        if (!res.ok || !res.body) {
          const body = await res.text().catch(() => '');
          let message = `HTTP ${res.status}`;
          try {
            message = (JSON.parse(body) as { error: { message: string } }).error.message;
          } catch {
            /* keep the status */
          }
          // Client errors other than throttling will not fix themselves by retrying.
          if (res.status >= 400 && res.status < 500 && res.status !== 429 && res.status !== 408)
            return finish('failed', message);
          throw new Error(message);
        }
        opts.onState('open');
        failures = 0;
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done || closed) break;
          offset += value.byteLength;
          consume(decoder.decode(value, { stream: true }));
        }
      } catch (e) {
        if (closed) return;
        failures++;
        void e;
      }
      if (closed) return;
      // The connection ended without [DONE]: wait a little and resume from the byte offset.
      await new Promise((r) => setTimeout(r, Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(failures, 5))));
    }
  };
  void connect();
  return {
    close: () => {
      closed = true;
      ctrl?.abort();
    },
    offset: () => offset,
  };
}
