// A loopback server laid out like the Hugging Face hub's public file URLs:
// GET /<owner>/<repo>/resolve/<rev>/<path> answers 302 to /cdn/<sha256> with X-Linked-Etag (the file's
// sha256, as the hub sends for files in its LFS store), and /cdn/<sha256> serves the bytes with Range
// support. `cutFirst` makes the first body request stop after that many bytes (the connection is destroyed),
// so a download has to resume. Every request is recorded for assertions.
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface HubFile {
  owner: string;
  repo: string;
  rev?: string;
  path: string;
  bytes: Buffer /** Announce another sha256 (a corrupt mirror). */;
  etag?: string;
}

export interface ModelHub {
  url: string;
  requests: { path: string; range?: string; status: number }[];
  close(): Promise<void>;
}

export async function startModelHub(files: HubFile[], opts: { cutFirst?: number } = {}): Promise<ModelHub> {
  const bySha = new Map<string, Buffer>();
  const byPath = new Map<string, { sha: string; etag: string }>();
  for (const f of files) {
    const sha = createHash('sha256').update(f.bytes).digest('hex');
    bySha.set(sha, f.bytes);
    byPath.set(`/${f.owner}/${f.repo}/resolve/${f.rev ?? 'main'}/${f.path}`, { sha, etag: f.etag ?? sha });
  }
  const requests: ModelHub['requests'] = [];
  let cut = opts.cutFirst;
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname);
    const log = (status: number) => requests.push({ path, range: req.headers.range, status });
    const hit = byPath.get(path);
    if (hit) {
      log(302);
      res.writeHead(302, {
        location: `/cdn/${hit.sha}`,
        'x-linked-etag': `"${hit.etag}"`,
        'x-linked-size': String(bySha.get(hit.sha)!.length),
      });
      res.end();
      return;
    }
    const m = /^\/cdn\/([0-9a-f]{64})$/.exec(path);
    const bytes = m ? bySha.get(m[1]!) : undefined;
    if (!bytes) {
      log(404);
      res.writeHead(404);
      res.end('Entry not found');
      return;
    }
    const r = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = r ? Number(r[1]) : 0;
    if (start >= bytes.length && r) {
      log(416);
      res.writeHead(416, { 'content-range': `bytes */${bytes.length}` });
      res.end();
      return;
    }
    const body = bytes.subarray(start);
    const status = r ? 206 : 200;
    log(status);
    res.writeHead(status, {
      'content-length': body.length,
      'accept-ranges': 'bytes',
      'content-type': 'application/octet-stream',
      ...(r ? { 'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : {}),
    });
    if (cut !== undefined && cut < body.length) {
      const n = cut;
      cut = undefined;
      res.write(body.subarray(0, n), () => setTimeout(() => res.destroy(), 100));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
