// The HTTP+SSE transport (MCP 2024-11-05, for older clients) on uWS: the GET response is the event
// stream; its first event announces where to POST (`event: endpoint`), and every server message goes out
// as `event: message`. The SDK's SSEServerTransport needs Node's http objects, so this is the same protocol
// over the server's backpressure-aware SseWriter. Writes are chained: the writer holds one waiter at a time.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { SseWriter } from '../http/sse.js';

export class LegacySseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private chain: Promise<unknown> = Promise.resolve();
  private keepAlive: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly sessionId: string,
    private readonly writer: SseWriter,
    /** Where clients POST their messages, with the session id in the query. */
    private readonly endpoint: string,
    private readonly keepAliveMs: number,
  ) {}

  get isClosed(): boolean {
    return this.closed || this.writer.closed;
  }

  async start(): Promise<void> {
    this.writer.open();
    await this.write(`event: endpoint\ndata: ${this.endpoint}\n\n`);
    if (this.keepAliveMs > 0) {
      this.keepAlive = setInterval(() => {
        void this.write(': keep-alive\n\n');
      }, this.keepAliveMs);
      this.keepAlive.unref();
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.isClosed) throw new Error('the SSE stream of this session is closed');
    const ok = await this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    if (!ok) throw new Error('the SSE stream of this session is closed');
  }

  /** A message POSTed to the endpoint. */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.onmessage?.(message, extra);
  }

  /** The client went away: the session ends with its stream. */
  clientGone(): void {
    void this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
    // Let queued messages (a last reply) go out first.
    await this.chain.catch(() => {});
    this.writer.end();
    this.onclose?.();
  }

  private write(text: string): Promise<boolean> {
    const next = this.chain.then(() => (this.writer.closed ? false : this.writer.write(text)));
    this.chain = next.catch(() => false);
    return next;
  }
}
