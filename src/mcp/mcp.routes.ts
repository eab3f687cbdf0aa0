// /mcp on the one uWS server. Every route is `auth: 'key'`: a missing or bad key is 401 before any
// session exists, and a session is only ever reachable with the key that opened it.
//   POST   /mcp                   Streamable HTTP: initialize (no Mcp-Session-Id) or any message of a session
//   GET    /mcp + Mcp-Session-Id   Streamable HTTP: the session's server-to-client event stream
//   GET    /mcp (Accept: text/event-stream, no session)  legacy HTTP+SSE: opens a session on this stream
//   DELETE /mcp + Mcp-Session-Id   ends a Streamable HTTP session
//   POST   /mcp/messages?sessionId=  legacy HTTP+SSE: a client message; replies go out on the stream
import { z } from 'zod';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { defineRoute, type RequestContext, type Reply, type RouteDef } from '../http/route.js';
import { errors } from '../base/errors.js';
import { ErrorSchema } from '../http/openapi.js';
import type { Logger } from '../base/log.js';
import { fromWebResponse, toWebRequest } from './web-bridge.js';
import { MESSAGES_PATH, type McpSessions, type Session } from './session-opener.js';
import { mcpSdk, type McpSdk } from './sdk.js';

const JsonRpcBody = z
  .unknown()
  .meta({ description: 'A JSON-RPC 2.0 message (or batch) of the Model Context Protocol' });
const EventStream = z.string().meta({
  description:
    'Server-sent events, one JSON-RPC message per "event: message" (a legacy stream starts with "event: endpoint" naming the message URL)',
});
const Empty = z.string().meta({ description: 'Empty, or "Accepted"' });
const stream = { schema: EventStream, contentType: 'text/event-stream' };
const empty = { schema: Empty, contentType: 'text/plain' };
const tags = ['mcp'];
// The SDK's transport answers what it refuses (an Accept or Content-Type it cannot serve, a message that is not
// JSON-RPC, a second stream) with a JSON-RPC error object; the server's own refusals use the Error shape.
const JsonRpcError = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
    id: z.union([z.string(), z.number(), z.null()]),
  })
  .meta({ description: 'A JSON-RPC 2.0 error from the MCP transport' });
const mcpError = (description: string) => ({ description, schema: z.union([ErrorSchema, JsonRpcError]) });
const SESSION_HEADER = 'mcp-session-id';

function isInitialize({ types }: McpSdk, body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => types.isInitializeRequest(m)) : types.isInitializeRequest(body);
}

function jsonRpcMessages({ types }: McpSdk, body: unknown): JSONRPCMessage[] {
  const list = Array.isArray(body) ? body : [body];
  return list.map((m, i) => {
    const r = types.JSONRPCMessageSchema.safeParse(m);
    if (!r.success) {
      throw errors.invalidBody(
        `Invalid body${Array.isArray(body) ? ` element [${i}]` : ''}: expected a JSON-RPC 2.0 message ({jsonrpc: "2.0", method, id?, params?} or a response)`,
        null,
      );
    }
    return r.data;
  });
}

export function mcpRoutes(sessions: McpSessions, log: Logger): RouteDef[] {
  const reg = sessions.registry;

  /** Hands one request to a Streamable HTTP session; a POST waits for its replies, a GET stream runs on. */
  const streamable = async (
    ctx: RequestContext,
    session: Session & { kind: 'streamable-http' },
    wait: boolean,
  ): Promise<Reply> =>
    reg.using(session, async () => {
      const res = await session.transport.handleRequest(
        toWebRequest(ctx),
        ctx.method === 'POST' ? { parsedBody: ctx.body } : undefined,
      );
      const { reply, streaming } = await fromWebResponse(ctx, res);
      if (streaming) {
        if (wait) await streaming;
        else streaming.catch((err) => log.warn({ err, mcpSession: session.id }, 'mcp event stream failed'));
      }
      return reply;
    });

  const sessionOf = (ctx: RequestContext): Session & { kind: 'streamable-http' } => {
    const id = ctx.headers[SESSION_HEADER];
    if (!id) throw errors.invalidParam(SESSION_HEADER, 'Expected an Mcp-Session-Id header naming an open session');
    return reg.get(id, ctx.principal, 'streamable-http') as Session & { kind: 'streamable-http' };
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/mcp',
      auth: 'key',
      tags,
      body: JsonRpcBody,
      bodyLimit: sessions.settings.maxBodyBytes,
      summary:
        'MCP Streamable HTTP: an initialize request opens a session (Mcp-Session-Id in the reply); later messages carry that header',
      responses: {
        200: { description: 'JSON-RPC replies as an event stream', ...stream },
        202: { description: 'Notifications or responses accepted', ...empty },
        400: mcpError('Not an initialize request and no Mcp-Session-Id, or not JSON-RPC'),
        404: mcpError("Unknown, expired or another key's session (session_not_found)"),
        406: mcpError('Accept does not include both application/json and text/event-stream'),
        415: mcpError('Content-Type is not application/json'),
        429: { description: 'Too many open sessions for this key (too_many_sessions)' },
      },
      handler: async (ctx) => {
        if (ctx.headers[SESSION_HEADER]) return streamable(ctx, sessionOf(ctx), true);
        if (!isInitialize(await mcpSdk(), ctx.body)) {
          throw errors.invalidBody(
            'Expected an MCP initialize request (to open a session) or an Mcp-Session-Id header naming an open session',
            null,
          );
        }
        const release = reg.reserve(ctx.principal);
        try {
          const { session, abandon } = await sessions.openStreamable(ctx.principal);
          try {
            return await streamable(ctx, session, true);
          } finally {
            await abandon();
          }
        } finally {
          release();
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/mcp',
      auth: 'key',
      tags,
      noBody: true,
      summary:
        "MCP event stream: with Mcp-Session-Id, a Streamable HTTP session's server messages; without it, a legacy HTTP+SSE session (first event: endpoint)",
      responses: {
        200: { description: 'The event stream', ...stream },
        400: mcpError('Accept does not include text/event-stream'),
        404: mcpError("Unknown, expired or another key's session (session_not_found)"),
        406: mcpError('Accept does not include text/event-stream (with Mcp-Session-Id)'),
        409: mcpError('The session already has its event stream open'),
        429: { description: 'Too many open sessions for this key (too_many_sessions)' },
      },
      handler: async (ctx) => {
        if (ctx.headers[SESSION_HEADER]) return streamable(ctx, sessionOf(ctx), false);
        if (!(ctx.headers.accept ?? '').includes('text/event-stream')) {
          throw errors.invalidParam(
            'accept',
            'GET /mcp opens an event stream: send "Accept: text/event-stream" (and Mcp-Session-Id to reach a Streamable HTTP session)',
          );
        }
        const release = reg.reserve(ctx.principal);
        try {
          await sessions.openSse(ctx.principal, ctx.sse(), ctx.signal);
        } finally {
          release();
        }
        return { handled: true };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/mcp',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'Ends a Streamable HTTP MCP session (Mcp-Session-Id)',
      responses: {
        200: { description: 'Session ended', ...empty },
        400: mcpError('No Mcp-Session-Id header'),
        404: mcpError("Unknown, expired or another key's session (session_not_found)"),
      },
      handler: async (ctx) => streamable(ctx, sessionOf(ctx), true),
    }),
    defineRoute({
      method: 'POST',
      path: MESSAGES_PATH,
      auth: 'key',
      tags,
      body: JsonRpcBody,
      bodyLimit: sessions.settings.maxBodyBytes,
      summary:
        'MCP legacy HTTP+SSE: a client message for the session in ?sessionId=; replies go out on its event stream',
      responses: {
        202: { description: 'Accepted; the reply follows on the event stream', ...empty },
        400: { description: 'Not JSON-RPC' },
        404: { description: "Unknown, ended or another key's session (session_not_found)" },
      },
      handler: async (ctx) => {
        const session = reg.get(ctx.rawQuery.get('sessionId') ?? undefined, ctx.principal, 'sse') as Session & {
          kind: 'sse';
        };
        const messages = jsonRpcMessages(await mcpSdk(), ctx.body);
        const requestInfo = { headers: ctx.headers };
        for (const m of messages) session.transport.receive(m, { requestInfo });
        return { status: 202, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'Accepted' };
      },
    }),
  ];
}
