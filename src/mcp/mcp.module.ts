// MCP endpoint at /mcp (docs/mcp.md, "Transports"): legacy HTTP+SSE and Streamable HTTP transports on the one uWS
// server, offering sightflow's REST routes as tools (tool-catalogue.ts) that dispatch in-process.
import type { Module, ModulePart } from '../base/module.js';
import type { Services } from '../services/services.js';
import type { McpSettings } from '../config/index.js';
import { McpSessions } from './session-opener.js';
import { mcpRoutes } from './mcp.routes.js';
import { RouteTools } from './route-tools.js';
import type { Router } from '../http/router.js';

/** MCP keeps its sessions in memory: no tables. */
export const mcpPart: ModulePart = { name: 'mcp', migrations: [] };

export function mcpModule(
  s: Services,
  ports: { router: () => Router | undefined },
  settings: Partial<McpSettings> = {},
): Module {
  const log = s.log.child({ module: 'mcp' });
  // The server's route table (app.ts hands it over; absent where no HTTP server runs).
  const tools = new RouteTools(ports.router);
  const sessions = new McpSessions(
    { tools, version: s.version, log, maxJsonBytes: s.config.maxJsonBytes },
    { ...s.config.mcp, ...settings },
  );
  return {
    ...mcpPart,
    routes: mcpRoutes(sessions, log),
    async start() {
      sessions.start();
    },
    async stop() {
      await sessions.stop();
    },
  };
}
