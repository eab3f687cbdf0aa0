// MCP endpoint settings, from the environment (README "Configuration"): how long an idle session lives, how
// many a key may hold open, and how large one JSON-RPC message may be.
import { z } from 'zod';
import { parseEnv } from '../config.js';

export interface McpSettings {
  /** A session with no request for this long is closed (its streams end; its id answers 404). */
  sessionIdleMs: number;
  /** Open sessions per API key; one more is 429 (the client should end or reuse one). */
  maxSessionsPerKey: number;
  /** Largest JSON-RPC POST body; a tool's own route limit still applies to its arguments. */
  maxBodyBytes: number;
  /** SSE comment lines on idle event streams, so proxies keep them open. */
  keepAliveMs: number;
}

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

const EnvSchema = z.object({
  SIGHTFLOW_MCP_SESSION_IDLE_MS: int(10 * 60_000, 1),
  SIGHTFLOW_MCP_MAX_SESSIONS_PER_KEY: int(16, 1),
  // The largest route body a tool reaches (index_items: up to 100 media items) is 128 MiB.
  SIGHTFLOW_MCP_MAX_BODY_BYTES: int(128 * 1024 * 1024, 1024),
  SIGHTFLOW_MCP_KEEPALIVE_MS: int(15_000, 0),
});

export function mcpSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): McpSettings {
  const e = parseEnv(EnvSchema, env);
  return {
    sessionIdleMs: e.SIGHTFLOW_MCP_SESSION_IDLE_MS,
    maxSessionsPerKey: e.SIGHTFLOW_MCP_MAX_SESSIONS_PER_KEY,
    maxBodyBytes: e.SIGHTFLOW_MCP_MAX_BODY_BYTES,
    keepAliveMs: e.SIGHTFLOW_MCP_KEEPALIVE_MS,
  };
}
