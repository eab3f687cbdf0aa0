// A loopback HTTP proxy in front of a real sightflow that does to a client what networks and busy servers
// do, on demand: answer a status without asking the server (a 503 with Retry-After), cut the connection
// after the server has received and answered the request, or cut a result stream in the middle of an event.
// It records every request it receives and every one it forwards, so a test can say "sent exactly once" or
// "the server received it". Faults are armed per test through `arm()` (in process) or the control API of
// ./server.ts (from another language); each fault matches a method and a path pattern and fires `times` times.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | {
      kind: 'status';
      method: string;
      path: string;
      status: number;
      headers?: Record<string, string>;
      body?: unknown;
      times?: number;
    }
  | { kind: 'cut_after_upstream'; method: string; path: string; times?: number }
  /**
   * Cuts successive matching stream responses: `first` in the middle of the response's first event (right
   * after a resume when the client resumed), `second` in the middle of its second event; `stall` stops in
   * the middle of the second event and keeps the connection open, sending nothing more (a dead peer).
   */
  | { kind: 'cut_stream'; method: string; path: string; cuts: Array<'first' | 'second' | 'stall'> };

export interface Seen {
  method: string;
  path: string;
  query: string;
  forwarded: boolean;
  status: number | null;
  fault: string | null;
}
export interface StreamCut {
  startOffset: number;
  cutAt: number;
  midEvent: boolean;
  mode: 'first' | 'second' | 'stall';
}

interface Armed {
  fault: Fault;
  left: number;
}

export class FaultProxy {
  private server: Server | null = null;
  private armed: Armed[] = [];
  readonly seen: Seen[] = [];
  readonly cuts: StreamCut[] = [];
  url = '';

  constructor(private readonly upstream: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  arm(fault: Fault): void {
    const left = fault.kind === 'cut_stream' ? fault.cuts.length : (fault.times ?? 1);
    this.armed.push({ fault: structuredClone(fault), left });
  }

  reset(): void {
    this.armed = [];
    this.seen.length = 0;
    this.cuts.length = 0;
  }

  /** Requests received with this method whose path (without query) matches. */
  count(method: string, path: string | RegExp, opts: { forwarded?: boolean } = {}): number {
    return this.seen.filter(
      (s) =>
        s.method === method &&
        (typeof path === 'string' ? s.path === path : path.test(s.path)) &&
        (opts.forwarded === undefined || s.forwarded === opts.forwarded),
    ).length;
  }

  private take(method: string, path: string): Armed | null {
    for (const a of this.armed) {
      if (a.left <= 0 || a.fault.method !== method) continue;
      if (!new RegExp(`^${a.fault.path}$`).test(path)) continue;
      return a;
    }
    return null;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    const seen: Seen = { method, path: u.pathname, query: u.search, forwarded: false, status: null, fault: null };
    this.seen.push(seen);
    const body = await readBody(req);
    const armed = this.take(method, u.pathname);
    if (armed?.fault.kind === 'status') {
      armed.left--;
      seen.fault = 'status';
      seen.status = armed.fault.status;
      const payload = JSON.stringify(
        armed.fault.body ?? {
          error: {
            type: 'overloaded_error',
            code: 'overloaded',
            message: 'Injected by the conformance proxy',
            param: null,
          },
        },
      );
      res.writeHead(armed.fault.status, {
        'content-type': 'application/json',
        'x-request-id': 'req_conformance',
        ...armed.fault.headers,
      });
      res.end(payload);
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    const up = httpRequest(this.upstream + (req.url ?? '/'), { method, headers });
    seen.forwarded = true;
    up.on('error', () => res.destroy());
    up.on('response', (ur) => {
      seen.status = ur.statusCode ?? null;
      if (armed?.fault.kind === 'cut_after_upstream') {
        armed.left--;
        seen.fault = 'cut_after_upstream';
        // The server received and answered it; the client gets nothing but a reset.
        ur.resume();
        ur.on('end', () => req.socket.destroy());
        return;
      }
      if (armed?.fault.kind === 'cut_stream' && ur.statusCode === 200) {
        const mode = armed.fault.cuts[armed.fault.cuts.length - armed.left]!;
        armed.left--;
        seen.fault = `cut_stream:${mode}`;
        this.cutStream(ur, res, mode, Number(ur.headers['x-stream-offset'] ?? u.searchParams.get('offset') ?? 0));
        return;
      }
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.end(body);
  }

  /** Passes the stream on, holding bytes until it knows where the chosen event lies, then cuts inside it. */
  private cutStream(
    ur: IncomingMessage,
    res: ServerResponse,
    mode: 'first' | 'second' | 'stall',
    startOffset: number,
  ): void {
    res.writeHead(200, ur.headers);
    res.flushHeaders();
    let buf = Buffer.alloc(0);
    let done = false;
    ur.on('data', (b: Buffer) => {
      if (done) return;
      buf = Buffer.concat([buf, b]);
      const e1 = buf.indexOf('\n\n');
      if (e1 < 0) return;
      let from = 0;
      let to = e1 + 2;
      if (mode !== 'first') {
        const e2 = buf.indexOf('\n\n', e1 + 2);
        if (e2 < 0) return;
        from = e1 + 2;
        to = e2 + 2;
      }
      const cutAt = from + Math.max(1, Math.floor((to - from) / 2));
      done = true;
      this.cuts.push({ startOffset, cutAt: startOffset + cutAt, midEvent: true, mode });
      if (mode === 'stall') {
        res.write(buf.subarray(0, cutAt));
        ur.destroy();
        return;
      }
      res.write(buf.subarray(0, cutAt), () =>
        setTimeout(() => {
          res.socket?.destroy();
          ur.destroy();
        }, 20),
      );
    });
    ur.on('end', () => {
      if (!done) res.end(buf);
    });
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}
