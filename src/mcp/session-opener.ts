// Opening MCP sessions for both transports: a tool server bound to the caller's key, connected to either the
// SDK's web-standard Streamable HTTP transport or the legacy SSE transport, registered so later requests
// find it and so that ending either side (DELETE, stream closed, idle expiry, shutdown) ends both.
import { randomUUID } from 'node:crypto';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Principal } from '../auth/authenticator.js';
import type { SseWriter } from '../http/sse.js';
import { LegacySseTransport } from './legacy-sse-transport.js';
import { SessionRegistry, type McpSession } from './session-registry.js';
import { createToolServer, type ToolServerDeps } from './tool-server.js';
import type { McpSettings } from '../config/index.js';
import { mcpSdk, type McpSdk } from './sdk.js';

export type Session =
  | (McpSession & { kind: 'streamable-http'; transport: WebStandardStreamableHTTPServerTransport })
  | (McpSession & { kind: 'sse'; transport: LegacySseTransport });

/** Where legacy clients POST their messages; the session id travels in the query. */
export const MESSAGES_PATH = '/mcp/messages';

export class McpSessions {
  readonly registry: SessionRegistry<Session>;

  constructor(
    private readonly deps: ToolServerDeps,
    readonly settings: McpSettings,
  ) {
    this.registry = new SessionRegistry<Session>(
      { idleMs: settings.sessionIdleMs, maxPerKey: settings.maxSessionsPerKey },
      deps.log,
    );
  }

  /**
   * A Streamable HTTP session whose id exists once its initialize request is handled (the transport calls
   * back then); `abandon()` frees it when the request did not initialise it.
   */
  async openStreamable(
    principal: Principal,
  ): Promise<{ session: Session & { kind: 'streamable-http' }; abandon(): Promise<void> }> {
    const sdk = await mcpSdk();
    const id = randomUUID();
    let session!: Session & { kind: 'streamable-http' };
    const transport = new sdk.StreamableTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => this.registry.add(session),
      keepAliveMs: this.settings.keepAliveMs,
    });
    const server = this.serverFor(sdk, id, principal, () => session);
    session = {
      id,
      kind: 'streamable-http',
      principal,
      lastActive: Date.now(),
      inFlight: 0,
      transport,
      close: () => server.close(),
    };
    await server.connect(transport);
    return {
      session,
      abandon: async () => {
        if (!this.registry.has(id)) await server.close();
      },
    };
  }

  /** A legacy SSE session on `writer`: registered before the endpoint event goes out, so its POSTs find it. */
  async openSse(principal: Principal, writer: SseWriter, signal: AbortSignal): Promise<Session & { kind: 'sse' }> {
    const sdk = await mcpSdk();
    const id = randomUUID();
    const transport = new LegacySseTransport(id, writer, `${MESSAGES_PATH}?sessionId=${id}`, this.settings.keepAliveMs);
    let session!: Session & { kind: 'sse' };
    const server = this.serverFor(sdk, id, principal, () => session);
    session = {
      id,
      kind: 'sse',
      principal,
      lastActive: Date.now(),
      inFlight: 0,
      transport,
      close: () => server.close(),
    };
    this.registry.add(session);
    try {
      await server.connect(transport);
    } catch (e) {
      await server.close().catch(() => {});
      throw e;
    }
    if (signal.aborted) transport.clientGone();
    else signal.addEventListener('abort', () => transport.clientGone(), { once: true });
    return session;
  }

  private serverFor(sdk: McpSdk, id: string, principal: Principal, session: () => Session): McpServer {
    const ended = new AbortController();
    const server = createToolServer(sdk, this.deps, {
      id,
      principal,
      signal: ended.signal,
      busy: (d) => {
        const s = session();
        s.inFlight += d;
        s.lastActive = Date.now();
      },
    });
    // Whoever ends the session (DELETE, stream gone, expiry, shutdown), the registry and tool work follow.
    server.server.onclose = () => {
      this.registry.remove(id);
      ended.abort(new Error('the MCP session ended'));
    };
    return server;
  }

  start(): void {
    this.registry.start();
  }

  stop(): Promise<void> {
    return this.registry.closeAll();
  }
}
