// An SseWriter for a route handler that answers `{handled: true}`. The server owns the response's one
// onAborted handler and turns a client abort into ctx.signal; this bridges that signal into the ResState
// the writer watches, so no handler needs the server's internals.
import type { RequestContext } from './route.js';
import type { ResState } from './send.js';
import { SseWriter } from './sse.js';

export function sseWriterFor(ctx: RequestContext): SseWriter {
  const st: ResState = { aborted: false, done: false, status: 0, onAbort: [] };
  const onAbort = () => {
    st.aborted = true;
    for (const f of st.onAbort.splice(0)) f();
  };
  const signal = ctx.signal;
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return new SseWriter(ctx.res, st);
}
