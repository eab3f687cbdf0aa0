// One MCP server per session, bound to the key that opened it: tools/list offers the route tools that exist,
// tools/call dispatches into the route in-process. A route's answer becomes structured content plus a short
// summary (and the JSON as text, for clients that only read text); an ApiError becomes a tool error carrying
// the REST message, so an agent can correct its arguments and call again on the same session.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/authenticator.js';
import type { Logger } from '../base/log.js';
import { errors, isApiError, toolCancelledBody } from '../base/errors.js';
import { callRoute } from './route-dispatch.js';
import type { RouteTools } from './route-tools.js';
import type { McpSdk } from './sdk.js';

export interface ToolServerDeps {
  tools: RouteTools;
  version: string;
  log: Logger;
  maxJsonBytes: number;
}

export interface SessionBinding {
  id: string;
  principal: Principal;
  /** Aborted when the session ends: tool work in flight is dropped with it. */
  signal: AbortSignal;
  /** Keeps the session from expiring while a call runs. */
  busy(delta: 1 | -1): void;
}

const INSTRUCTIONS =
  'sightflow analyses images (describe_image, read_text, detect_objects), runs asynchronous video tasks ' +
  '(start_video_task, then poll get_video_task until succeeded, then get_video_results), counts on them (count_on_video with lines and zones, get_video_counts) and searches vector collections ' +
  '(list_collections, index_items, search_collection). Images are http(s) URLs or base64 data URIs.';

function toolError(message: string, body: unknown): CallToolResult {
  return {
    isError: true,
    content: [
      { type: 'text', text: message },
      { type: 'text', text: JSON.stringify(body) },
    ],
  };
}

export function createToolServer(sdk: McpSdk, deps: ToolServerDeps, session: SessionBinding): McpServer {
  const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = sdk.types;
  const mcp = new sdk.McpServer(
    { name: 'sightflow', title: 'sightflow', version: deps.version },
    { instructions: INSTRUCTIONS },
  );
  // The low-level handlers: tools are generated from the route table, not registered one by one with zod.
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...deps.tools.all().values()].map((t) => t.tool),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const name = req.params.name;
    const rt = deps.tools.get(name);
    if (!rt) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${JSON.stringify(name)}; available: ${[...deps.tools.all().keys()].join(', ')}`,
      );
    }
    const started = performance.now();
    const log = deps.log.child({ mcpSession: session.id, tool: name });
    session.busy(1);
    try {
      const ans = await callRoute({
        def: rt.def,
        pathParams: rt.pathParams,
        args: req.params.arguments,
        principal: session.principal,
        signal: AbortSignal.any([extra.signal, session.signal]),
        log,
        maxJsonBytes: deps.maxJsonBytes,
      });
      const structured =
        ans.json && typeof ans.json === 'object' && !Array.isArray(ans.json)
          ? (ans.json as Record<string, unknown>)
          : { result: ans.json };
      log.info(
        { requestId: ans.requestId, status: ans.status, ms: Math.round(performance.now() - started) },
        'mcp tool call',
      );
      return {
        content: [
          { type: 'text', text: rt.spec.summarize(ans.json) },
          { type: 'text', text: JSON.stringify(ans.json) },
        ],
        structuredContent: structured,
      };
    } catch (e) {
      const err = isApiError(e) ? e : errors.internal();
      if (!isApiError(e)) {
        if (extra.signal.aborted || session.signal.aborted)
          return toolError('The tool call was cancelled', toolCancelledBody());
        log.error({ err: e }, 'mcp tool call failed');
      } else {
        log.info(
          { status: err.status, code: err.code, ms: Math.round(performance.now() - started) },
          'mcp tool call rejected',
        );
      }
      return toolError(err.message, err.toBody());
    } finally {
      session.busy(-1);
    }
  });
  return mcp;
}
