import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { errors } from '../src/errors.js';
import { UnknownTenantError } from '../src/gateway.js';
import { callOptionsFor, defaultCallId, requestCancellation, requestMode } from '../src/http/call-options.js';
import { checkedMessages, invalidParams, traceMeta } from '../src/mcp/call-params.js';
import { callEvent, catalogEvent } from '../src/audit/events.js';
import type { AuditSink } from '../src/audit/types.js';
import { failureResult } from '../src/execution/tool-result.js';
import { mcpEntry } from '../src/registry/formats.js';
import { toCallToolResult } from '../src/mcp-server/call-result.js';
import { asksForProgress, cancelledRequestIds, opensSession } from '../src/mcp-server/messages.js';
import { createCatalogGovernance, type CatalogGovernance } from '../src/mcp-server/catalog-governance.js';
import { registerResourcesAndPrompts, RESOURCE_AND_PROMPT_CAPABILITIES } from '../src/mcp-server/serve-resources.js';
import { mcpServerSpan } from '../src/mcp-server/server-span.js';
import { createSessionHub, type SessionHub } from '../src/mcp-server/session-hub.js';
import { createMcpSessions } from '../src/mcp-server/sessions.js';
import { openSseStream } from '../src/mcp-server/sse-stream.js';
import { createUrlElicitations, declaresUrlElicitation, type UrlElicitations } from '../src/mcp-server/url-elicitation.js';
import { bearerSecurity, errorResponses, toolsetName } from '../src/schemas/common.js';
import { isStoreUnavailable } from '../src/store/unavailable.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/**
 * One SDK server per HTTP request (the transport is stateless even when the endpoint has sessions: the
 * session layer sits in front of it, see docs/architecture.md#mcp-sessions): its tools/list is the
 * principal's pool and its tools/call is the gateway's one execution path, exactly as /v1/execute uses it.
 * `session`: the MCP session the request belongs to, so a notifications/cancelled naming a call finds it.
 */
function serverFor(
  app: FastifyInstance,
  catalog: CatalogGovernance,
  request: FastifyRequest,
  reply: FastifyReply,
  toolset: string | undefined,
  session: { id: string; hub: SessionHub } | undefined,
  elicitations: UrlElicitations,
): Server {
  const server = new Server({ name: toolset === undefined ? 'toolgate' : `toolgate/${toolset}`, version: '0.1.0' }, { capabilities: { tools: { listChanged: session !== undefined }, ...RESOURCE_AND_PROMPT_CAPABILITIES } });
  registerResourcesAndPrompts(server, {
    reachable: () => app.gateway.mcpServicesFor(request.principal),
    log: request.log,
    trace: request.traceContext,
    caller: { principal: request.principal, requestId: request.id, via: 'mcp', governance: catalog },
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const pool = await tenantKnown(app.gateway.poolFor(request.principal, requestMode(request), toolset));
    return { tools: pool.tools.map((tool) => mcpEntry(pool, tool) as McpTool) };
  });
  const clientGone = requestCancellation(reply, app.drain);
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    // Cancelled by the MCP client (notifications/cancelled, which may arrive on any replica), by the HTTP
    // connection going away or by a shutdown. AbortSignal.any adds no listener to its sources, so a
    // JSON-RPC batch of calls piles none up.
    const tracked = session?.hub.trackCall(session.id, extra.requestId);
    try {
      const signals = [clientGone.signal, extra.signal, ...(tracked ? [tracked.signal] : [])];
      const options = callOptionsFor(request, defaultCallId(undefined, 0), AbortSignal.any(signals));
      // An upstream's progress is relayed under the client's own token, on this request's event stream.
      const token = call.params._meta?.progressToken;
      if (token !== undefined) {
        options.onProgress = (update) => {
          extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } }).catch(() => undefined);
        };
      }
      const result = await tenantKnown(app.gateway.execute({ name: call.params.name, arguments: call.params.arguments ?? {} }, options, toolset));
      // A call needing the user's connection, from a client that declared URL-mode elicitation: the spec's error.
      const elicitation = await elicitations.errorFor(result, request.principal, session?.id);
      if (elicitation) throw elicitation;
      return toCallToolResult(result);
    } finally {
      tracked?.done();
    }
  });
  return server;
}

/**
 * A tenant removed by a reload between the HTTP check and this JSON-RPC message: the JSON-RPC error carries
 * the request-level code (the HTTP status is already sent by the transport).
 */
async function tenantKnown<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof UnknownTenantError) throw new McpError(ErrorCode.InvalidRequest, 'TG_UNKNOWN_TENANT: tenant is not configured');
    throw error;
  }
}

/**
 * Each `tools/call`, `resources/read` and `prompts/get` of a body refused for its params reached /mcp: one
 * VALIDATION_ERROR line each, of the kind its accepted twin writes (call, resource_read, prompt_get).
 */
function auditRefusedMessages(audit: AuditSink, request: FastifyRequest, reason: string): void {
  if (audit.enabled === false) return;
  const origin = { requestId: request.id, tenant: request.principal.tenant, user: request.principal.user };
  const time = Date.now();
  for (const { method, name } of checkedMessages(request.body)) {
    if (method === 'tools/call') {
      const callId = defaultCallId(undefined, 0);
      const result = failureResult('VALIDATION_ERROR', reason, { callId, name });
      audit.write(callEvent(origin, result, { callId, tool: name, source: null, argsSha256: null, time, durationMs: 0, approvalId: null }));
      continue;
    }
    const kind = method === 'resources/read' ? 'resource' : 'prompt';
    audit.write(catalogEvent(origin, { kind, via: 'mcp', name, service: null, argsSha256: null, time, durationMs: 0, errorType: 'VALIDATION_ERROR' }));
  }
}

/** GET and DELETE while sessions are off: the transport spec allows 405 for both (a stateless server). */
function sessionsOff(reply: FastifyReply): Error {
  reply.header('allow', 'POST');
  return new errors.TG_METHOD_NOT_ALLOWED('MCP sessions are off (mcpServer.sessions: false): this endpoint is stateless, use POST');
}

// The same answer for an id nobody issued, an expired or ended one, and another principal's (the store
// lookup cannot tell them apart either, see src/mcp-server/sessions.ts): a session id is no oracle.
const sessionNotFound = (): Error => new errors.TG_NOT_FOUND('MCP session not found');

type McpRequest = FastifyRequest<{ Params: { toolset?: string } }>;

const jsonRpcBody = {
  type: 'object',
  required: ['jsonrpc'],
  additionalProperties: true,
  properties: { jsonrpc: { type: 'string', enum: ['2.0'] }, id: { type: ['string', 'integer', 'null'] }, result: {}, error: { type: 'object', additionalProperties: true } },
} as const;

// The transport writes most answers itself (the reply is hijacked); a refusal sent before it is
// serialised with this schema, so it keeps every JSON-RPC member.
const mcpResponses = {
  200: { description: 'The JSON-RPC response (`initialize` answers with an `Mcp-Session-Id` header unless sessions are off)', ...jsonRpcBody },
  202: { description: 'A notification or response was accepted (no body)', type: 'null' },
  404: { $ref: 'ErrorBody#' },
  ...errorResponses,
};

const sessionHeader = (request: FastifyRequest): string | undefined => {
  const value = request.headers['mcp-session-id'];
  return typeof value === 'string' ? value : undefined;
};

/**
 * toolgate as an MCP server over streamable HTTP (POST /mcp), Bearer auth as for the REST API;
 * `/mcp/<toolset>` is the same server narrowed to one of the caller's tenant's toolsets (a virtual server).
 * With sessions (`mcpServer.sessions`, the default) `initialize` issues an `Mcp-Session-Id`, GET opens the
 * session's notification stream and DELETE ends it; a POST without a session id is still served, statelessly.
 */
const routes: RoutePlugin = async (app) => {
  // Audit and rate limit of resources/read and prompts/get (src/mcp-server/catalog-governance.ts).
  const catalog = createCatalogGovernance(app.governance.policyDeps);
  const sessions = createMcpSessions(app.governance.store);
  const elicitations = createUrlElicitations(app.governance.store);
  const hub = createSessionHub({
    bus: app.governance.bus,
    log: app.log,
    fingerprint: async (principal, mode, toolset) => {
      try {
        return (await app.gateway.poolFor(principal, mode, toolset)).fingerprint;
      } catch {
        // The tenant or the toolset was removed: nothing this session could list.
        return undefined;
      }
    },
  });
  app.metrics.watchMcpStreams(() => hub.openStreams());
  const stopWatching = app.gateway.onChange(() => hub.poolsMayHaveChanged());
  // Open streams would keep the listener from closing: they end first, and their clients reconnect elsewhere.
  app.addHook('preClose', (done) => {
    stopWatching();
    hub.close();
    done();
  });

  /** Checks the tenant (a reload may have removed it after authentication) and the toolset (404 for an unknown one). */
  const endpoint = (request: McpRequest): string | undefined => {
    if (!app.gateway.tenant(request.principal.tenant)) throw new errors.TG_UNKNOWN_TENANT();
    const toolset = request.params.toolset;
    if (toolset !== undefined) app.gateway.assertToolset(request.principal, toolset);
    return toolset;
  };

  /** The session a POST belongs to: resumed, newly made by `initialize`, or none (stateless). */
  const sessionOf = async (request: McpRequest, reply: FastifyReply, toolset: string | undefined): Promise<string | null | undefined> => {
    const settings = app.gateway.config.mcpServer;
    if (!settings.sessions) return undefined;
    const presented = sessionHeader(request);
    if (presented !== undefined) return (await sessions.resume(request.principal, presented, toolset, settings)) ? presented : null;
    if (!opensSession(request.body)) return undefined;
    try {
      const { id, ended } = await sessions.create(request.principal, toolset, settings);
      for (const old of ended) {
        hub.end(old);
        void elicitations.forget(request.principal, old).catch(() => undefined);
      }
      // Unrecorded, the client gets the tool error with the URL instead of the elicitation: no reason to refuse the session.
      if (declaresUrlElicitation(request.body)) await elicitations.declared(request.principal, id).catch((error: unknown) => request.log.warn({ err: error }, 'URL elicitation support not recorded'));
      app.metrics.countMcpSession(request.principal.tenant);
      reply.raw.setHeader('mcp-session-id', id);
      return id;
    } catch (error) {
      // Everything else keeps working while the store is down: the client is served without a session.
      if (!isStoreUnavailable(error)) throw error;
      request.log.warn({ err: error }, 'MCP session not created: the state store is unavailable');
      return undefined;
    }
  };

  const handle = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    const toolset = endpoint(request);
    // The parser has consumed the body stream: the transport must not be left to read it again.
    if (request.body === undefined) throw new errors.TG_BAD_REQUEST('the body must be a JSON-RPC message');
    const invalid = invalidParams(request.body);
    if (invalid) {
      auditRefusedMessages(app.governance.audit, request, invalid.error.message);
      return reply.send(invalid);
    }
    const session = await sessionOf(request, reply, toolset);
    if (session === null) throw sessionNotFound();
    if (session !== undefined) for (const id of cancelledRequestIds(request.body)) hub.cancel(session, id);
    const server = serverFor(app, catalog, request, reply, toolset, session === undefined ? undefined : { id: session, hub }, elicitations);
    // One JSON body per answer, unless a call asked for progress: then an event stream carries it before the result.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(request.body) });
    reply.hijack();
    // A hijacked reply skips Fastify's header handling: headers set on the raw response are merged into the transport's.
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  };

  /** GET: the session's server→client stream (tools/list_changed); one per session, the newest. */
  const openStream = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    const settings = app.gateway.config.mcpServer;
    if (!settings.sessions) throw sessionsOff(reply);
    const toolset = endpoint(request);
    const id = sessionHeader(request);
    if (id === undefined) throw new errors.TG_BAD_REQUEST('GET needs the Mcp-Session-Id that initialize returned');
    if (!(await sessions.resume(request.principal, id, toolset, settings))) throw sessionNotFound();
    const principal = request.principal;
    const mode = requestMode(request);
    const fingerprint = (await app.gateway.poolFor(principal, mode, toolset)).fingerprint;
    reply.hijack();
    let keepAlive: NodeJS.Timeout | undefined;
    const stream = openSseStream(reply.raw, { 'x-request-id': request.id, 'mcp-session-id': id }, STREAM_BUFFER_BYTES, () => {
      clearInterval(keepAlive);
      hub.detach(id, stream);
    });
    // A session has one stream: this one replaces an older one (a client that reconnected before its old
    // socket was seen to close), which is closed wherever it is (MCP lets the server close a stream).
    hub.attach(id, { principal, mode, toolset, stream, fingerprint });
    // While the stream is open the session is in use: its idle timer restarts, and a session ended or
    // expired in the store (DELETE on a replica whose message was lost) closes the stream.
    keepAlive = setInterval(() => {
      if (!stream.ping()) return;
      sessions.resume(principal, id, toolset, app.gateway.config.mcpServer).then(
        (live) => live || stream.close(),
        () => undefined,
      );
    }, Math.min(KEEP_ALIVE_MS, Math.floor(settings.idleTimeoutMs / 2)));
    keepAlive.unref();
  };

  /** DELETE: ends the session on every replica (its stream closes, its running calls are cancelled). */
  const endSession = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    if (!app.gateway.config.mcpServer.sessions) throw sessionsOff(reply);
    const toolset = endpoint(request);
    const id = sessionHeader(request);
    if (id === undefined) throw new errors.TG_BAD_REQUEST('DELETE needs the Mcp-Session-Id of the session to end');
    if (!(await sessions.end(request.principal, id, toolset))) throw sessionNotFound();
    hub.end(id);
    await elicitations.forget(request.principal, id).catch(() => undefined);
    return reply.code(204).send();
  };

  for (const url of ['/mcp', '/mcp/:toolset'] as const) {
    const narrowed = url !== '/mcp';
    const path = narrowed ? '/mcp/{toolset}' : '/mcp';
    const params = narrowed ? { params: { type: 'object', required: ['toolset'], properties: { toolset: toolsetName } } } : {};
    const sessionId = (required: boolean) => ({
      headers: {
        type: 'object',
        ...(required ? { required: ['mcp-session-id'] } : {}),
        properties: { 'mcp-session-id': { type: 'string', description: 'The session id `initialize` answered with' } },
      },
    });
    const unknownToolset = narrowed ? ' An unknown toolset, or one of another tenant, answers 404.' : '';
    app.post<{ Params: { toolset?: string } }>(
      url,
      {
        onRequest: app.authenticate,
        // One tenant slot per MCP request, as for /v1/execute, held until it is answered. An MCP client may
        // send its trace context in params._meta rather than as headers (src/plugins/tracing.ts).
        // The server span is named after the JSON-RPC method (`tools/call <tool>`), as the MCP conventions say.
        config: { runsCalls: true, traceCarrier: traceMeta, spanName: mcpServerSpan },
        schema: {
          tags: ['tools'],
          operationId: narrowed ? 'mcpToolset' : 'mcp',
          summary: narrowed
            ? "One toolset as an MCP server: tools/list and tools/call see only that subset of the caller's pool"
            : "toolgate as an MCP server (streamable HTTP): tools/list is the caller's pool, tools/call the governed execution path",
          description: `The body is one JSON-RPC message of the MCP streamable HTTP transport. \`initialize\` answers with an \`Mcp-Session-Id\` header (unless \`mcpServer.sessions\` is false); later requests send it back, and one with an unknown session id (or another caller's) answers 404. A request without a session id is served statelessly.${unknownToolset}`,
          security: bearerSecurity,
          ...params,
          ...sessionId(false),
          response: mcpResponses,
        },
      },
      handle,
    );
    app.get<{ Params: { toolset?: string } }>(
      url,
      {
        onRequest: app.authenticate,
        // A stream holds no admission slot while it is open (src/plugins/admission.ts).
        config: { opensStream: true },
        schema: {
          tags: ['tools'],
          operationId: narrowed ? 'mcpToolsetStream' : 'mcpStream',
          summary: `The MCP session's server→client event stream (${path})`,
          description: `Server-sent events carrying JSON-RPC notifications, e.g. \`notifications/tools/list_changed\` when the caller's pool changes. Needs the \`Mcp-Session-Id\` header; an unknown session (or another caller's) answers 404. A session has one stream: a new GET replaces (closes) the session's older stream, on whichever replica it is, so a client that reconnects is never refused. With \`mcpServer.sessions: false\` it answers 405.${unknownToolset}`,
          security: bearerSecurity,
          ...params,
          ...sessionId(true),
          response: {
            200: { description: 'The event stream (text/event-stream), open until the session ends, the client leaves or a newer GET of the session replaces it', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            404: { $ref: 'ErrorBody#' },
            405: { $ref: 'ErrorBody#' },
            ...errorResponses,
          },
        },
      },
      openStream,
    );
    app.delete<{ Params: { toolset?: string } }>(
      url,
      {
        onRequest: app.authenticate,
        schema: {
          tags: ['tools'],
          operationId: narrowed ? 'mcpToolsetEnd' : 'mcpEnd',
          summary: `Ends an MCP session (${path})`,
          description: `Ends the session named by the \`Mcp-Session-Id\` header: its stream closes and its running calls are cancelled, on every replica. An unknown session (or another caller's) answers 404; with \`mcpServer.sessions: false\` it answers 405.${unknownToolset}`,
          security: bearerSecurity,
          ...params,
          ...sessionId(true),
          response: {
            204: { description: 'The session ended', type: 'null' },
            404: { $ref: 'ErrorBody#' },
            405: { $ref: 'ErrorBody#' },
            ...errorResponses,
          },
        },
      },
      endSession,
    );
  }
};

/** A slow reader of a stream is cut off once this much waits for it (notifications are a few hundred bytes). */
const STREAM_BUFFER_BYTES = 64 * 1024;
/** How often an open stream is pinged and its session's idle timer restarted. */
const KEEP_ALIVE_MS = 25_000;

export const mcpRoutes = fp(routes, { name: 'toolgate-routes-mcp', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-governance', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
