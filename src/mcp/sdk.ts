// The MCP SDK is not imported with the app: its protocol schemas make it the largest import of the server's,
// and most processes that start the app (CLI commands, fronts, video workers, tests) never open a session.
// `sightflow serve` loads it before it listens (src/main.ts), so no request waits for it; elsewhere the first
// /mcp request does, and concurrent first requests share the one import.
export interface McpSdk {
  types: typeof import('@modelcontextprotocol/sdk/types.js');
  McpServer: typeof import('@modelcontextprotocol/sdk/server/mcp.js').McpServer;
  StreamableTransport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
}

let loading: Promise<McpSdk> | undefined;

export function mcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]).then(([types, server, transport]) => ({
    types,
    McpServer: server.McpServer,
    StreamableTransport: transport.WebStandardStreamableHTTPServerTransport,
  }));
  // A failed import is not kept: the next request tries again and reports its own error.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
