// Reads a task's SSE stream as the benches need it: after each network read, the time it arrived and the
// chunks (parsed `data: {...}` events) it completed, so a bench can time every chunk on arrival.
export async function* sseReads(body: ReadableStream<Uint8Array>): AsyncGenerator<{ now: number; chunks: any[] }> {
  const reader = body.getReader();
  let buf = '';
  try {
    for (;;) {
      const x = await reader.read();
      if (x.done) return;
      const now = Date.now();
      buf += Buffer.from(x.value).toString('utf8');
      const chunks: any[] = [];
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (ev.startsWith('data: {')) chunks.push(JSON.parse(ev.slice(6)));
      }
      yield { now, chunks };
    }
  } finally {
    reader.releaseLock();
  }
}
