// A plain HTTP server for a test video, with Range support (browsers fetch media in ranges) and the validators
// a real file server sends (ETag, Last-Modified), standing in for the "public URL" a video task is created with.
// A test can swap the file it serves or stop sending validators (a resource changed between two fetches).
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

export interface ServedFile {
  url: string;
  close(): Promise<void>;
  /** Serves these bytes from now on, with a new ETag and Last-Modified. */
  replace(bytes: Uint8Array): void;
  /** Whether responses carry ETag and Last-Modified (default true). */
  validators(on: boolean): void;
  /** Requests answered so far. */
  readonly requests: number;
}

export async function serveFile(
  path: string,
  contentType: string,
  /** `onRequest(n)`: before the n-th request (from 1) is answered, e.g. to replace the file between two. */
  options: { validators?: boolean; onRequest?: (n: number) => void } = {},
): Promise<ServedFile> {
  let bytes: Buffer = readFileSync(path);
  let validators = options.validators ?? true;
  let version = 0;
  const tag = () => `"${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}"`;
  let etag = tag();
  // Whole seconds (HTTP dates have no more); each replacement a second later than the one before.
  const born = Math.floor(Date.now() / 1000) * 1000;
  const modified = () => new Date(born + version * 1000).toUTCString();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    options.onRequest?.(requests);
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Type', contentType);
    if (validators) {
      res.setHeader('ETag', etag);
      res.setHeader('Last-Modified', modified());
    }
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
    replace(next) {
      bytes = Buffer.from(next);
      version++;
      etag = tag();
    },
    validators(on) {
      validators = on;
    },
    get requests() {
      return requests;
    },
  };
}
