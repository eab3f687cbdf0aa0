// A plain HTTP server for a test video, with Range support (browsers fetch media in ranges), standing in for
// the "public URL" a video task is created with.
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

export async function serveFile(path: string, contentType: string): Promise<{ url: string; close(): Promise<void> }> {
  const bytes = readFileSync(path);
  const server: Server = createServer((req, res) => {
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Type', contentType);
    if (m && (m[1] || m[2])) {
      const start = m[1] ? Number(m[1]) : Math.max(0, bytes.length - Number(m[2]));
      const end = m[1] && m[2] ? Math.min(Number(m[2]), bytes.length - 1) : bytes.length - 1;
      if (start >= bytes.length || start > end) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` });
        res.end();
        return;
      }
      res.writeHead(206, {
        'Content-Range': `bytes ${start}-${end}/${bytes.length}`,
        'Content-Length': end - start + 1,
      });
      res.end(req.method === 'HEAD' ? undefined : bytes.subarray(start, end + 1));
      return;
    }
    res.writeHead(200, { 'Content-Length': bytes.length });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
