// Between uWS and the SDK's web-standard transport: a WHATWG Request built from the request context (the
// server already read and parsed the body; the transport takes it as parsedBody), and the transport's
// Response written back: a plain body as a Reply, an event stream through ctx.sse() chunk by chunk, each
// write awaited so a slow client holds back the stream instead of growing a buffer here.
import type { Reply, RequestContext } from '../http/route.js';

// Hop-by-hop or recomputed headers that must not be copied between the two worlds.
const SKIP_IN = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);
// SseWriter.open() writes these itself.
const SKIP_SSE_OUT = new Set([
  'content-type',
  'cache-control',
  'x-accel-buffering',
  'connection',
  'content-length',
  'transfer-encoding',
]);
const SKIP_OUT = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive']);

export function toWebRequest(ctx: RequestContext): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(ctx.headers)) if (!SKIP_IN.has(k)) headers.set(k, v);
  // The URL only feeds the SDK's request info; a Host header that is not a plain host[:port] must not make
  // the Request constructor throw.
  const host = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(ctx.headers.host ?? '')
    ? ctx.headers.host
    : 'localhost';
  const search = ctx.rawQuery.toString();
  return new Request(`http://${host}${ctx.path}${search ? `?${search}` : ''}`, { method: ctx.method, headers });
}

function headerRecord(res: Response, skip: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!skip.has(k)) out[k] = v;
  });
  return out;
}

/**
 * The transport's Response as a Reply. A plain body is returned whole; an event stream is piped through
 * ctx.sse() and `streaming` settles when it ends, so a caller that must not wait for it (a long-lived GET
 * stream) can leave it running and one that should (a POST's replies) awaits it.
 */
export async function fromWebResponse(
  ctx: RequestContext,
  res: Response,
): Promise<{ reply: Reply; streaming: Promise<void> | null }> {
  const ct = res.headers.get('content-type') ?? '';
  if (!res.body || res.status !== 200 || !ct.startsWith('text/event-stream')) {
    const body = Buffer.from(await res.arrayBuffer());
    return { reply: { status: res.status, headers: headerRecord(res, SKIP_OUT), body }, streaming: null };
  }
  const w = ctx.sse();
  const signal = ctx.signal; // read now: the server creates the abort controller on first access
  w.open(headerRecord(res, SKIP_SSE_OUT));
  const reader = res.body.getReader();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  const streaming = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!(await w.write(Buffer.from(value.buffer, value.byteOffset, value.byteLength)))) {
          cancel();
          break;
        }
      }
    } catch {
      // The transport errored the stream (its session ended): end the response below.
    } finally {
      signal.removeEventListener('abort', cancel);
      w.end();
    }
  })();
  return { reply: { handled: true }, streaming };
}
