// The HTTP front: one uWS catch-all handler; each request is an Exchange (exchange.ts) from its arrival to
// its log line. This class owns the listening socket, the route table and the count of requests in flight.
import { uws, type HttpRequest, type HttpResponse, type ListenSocket } from './uws.js';
import { Router } from './router.js';
import type { RouteDef } from './route.js';
import { Exchange, sha256, type ServerDeps, type ServerShared } from './exchange.js';

export type { ServerDeps };

export interface ServerOptions {
  /**
   * A front process's server: only the routes added here run as exchanges; every other request goes to this
   * handler (http/fronts/front-proxy.ts passes it to `serve`).
   */
  fallback?: (res: HttpResponse, req: HttpRequest) => void;
}

export class HttpServer implements ServerShared {
  readonly router = new Router();
  readonly adminTokenHash: Buffer | null;
  private readonly app = uws.App();
  private listenSockets: ListenSocket[] = [];
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  private readonly exchange = (res: HttpResponse, req: HttpRequest) => {
    this.inFlight++;
    new Exchange(this, res, req).start();
  };

  constructor(
    readonly deps: ServerDeps,
    private readonly opts: ServerOptions = {},
  ) {
    this.adminTokenHash = deps.adminToken ? sha256(deps.adminToken) : null;
    this.app.any('/*', opts.fallback ?? this.exchange);
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  ended(): void {
    if (--this.inFlight === 0 && this.idleWaiters.length > 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  route(def: RouteDef): void {
    this.router.add(def);
    // uWS prefers the exact pattern to the catch-all, so the fallback never sees these paths.
    if (this.opts.fallback) this.app.any(def.path, this.exchange);
  }

  /** Listens on one more address (`serve` with front processes also listens on loopback for them). */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (sock) => {
        if (!sock) return reject(new Error(`could not listen on ${host}:${port}`));
        this.listenSockets.push(sock);
        resolve(uws.us_socket_local_port(sock as never));
      });
    });
  }

  /** Stops accepting connections, then waits (up to timeoutMs) for in-flight requests to finish. */
  async stop(timeoutMs: number): Promise<void> {
    for (const sock of this.listenSockets.splice(0)) uws.us_listen_socket_close(sock);
    if (this.inFlight > 0) {
      await Promise.race([
        new Promise<void>((r) => this.idleWaiters.push(r)),
        new Promise<void>((r) => setTimeout(r, timeoutMs).unref()),
      ]);
    }
    // Let uSockets flush the last responses before the caller exits the process.
    await new Promise((r) => setTimeout(r, 50));
  }
}
