// MCP clients of the SDK itself over loopback, for both transports, with the key in the Authorization header
// (requestInit reaches every POST and the SSE GET of both client transports).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { TestApp } from './app.js';

export type Kind = 'streamable-http' | 'sse';
export const KINDS: Kind[] = ['streamable-http', 'sse'];

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport | SSEClientTransport;
  close(): Promise<void>;
}

export function transportFor(
  t: TestApp,
  kind: Kind,
  key: string | null = t.key,
  sessionId?: string,
): StreamableHTTPClientTransport | SSEClientTransport {
  const headers: Record<string, string> = key === null ? {} : { Authorization: `Bearer ${key}` };
  const url = new URL('/mcp', t.url);
  return kind === 'streamable-http'
    ? new StreamableHTTPClientTransport(url, { requestInit: { headers }, sessionId })
    : new SSEClientTransport(url, { requestInit: { headers } });
}

export async function connect(t: TestApp, kind: Kind, key: string | null = t.key): Promise<Connected> {
  const client = new Client({ name: 'sightflow-test', version: '0.0.0' });
  const transport = transportFor(t, kind, key);
  await client.connect(transport);
  return {
    client,
    transport,
    async close() {
      if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The first text block of a tool result. */
export function textOf(r: object): string {
  const c = ((r as { content?: unknown }).content as Array<{ type: string; text?: string }> | undefined) ?? [];
  return c.find((x) => x.type === 'text')?.text ?? '';
}
