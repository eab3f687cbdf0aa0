// MCP endpoint at /mcp (issue 8): legacy HTTP+SSE and Streamable HTTP transports.
import type { Module } from '../module.js';
import type { Services } from '../services.js';

export function mcpModule(_s: Services): Module {
  return { routes: [] };
}
