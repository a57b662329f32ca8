import fp from 'fastify-plugin';
import { traceMeta } from '../src/mcp/server/request-params.js';
import { createMcpEndpoint } from '../src/mcp/server/endpoint.js';
import { mcpServerSpan } from '../src/mcp/server/server-span.js';
import { bearerSecurity, errorResponses, toolsetName } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

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
  // A session past `mcpServer.signalRate` (cancellations and relay answers), with Retry-After.
  429: { $ref: 'ErrorBody#' },
  ...errorResponses,
};

/**
 * toolgate as an MCP server over streamable HTTP (POST /mcp), Bearer auth as for the REST API;
 * `/mcp/<toolset>` is the same server narrowed to one of the caller's tenant's toolsets (a virtual server).
 * With sessions (`mcpServer.sessions`, the default) `initialize` issues an `Mcp-Session-Id`, GET opens the
 * session's notification stream and DELETE ends it; a POST without a session id is still served, statelessly.
 * A 2026-07-28 request (the `_meta` envelope) is served statelessly by the SDK v2 entry (docs/mcp.md#two-protocol-eras).
 */
const routes: RoutePlugin = async (app) => {
  // The endpoint takes what it uses as one plain object (src/mcp/server/deps.ts), never the Fastify instance.
  const endpoint = createMcpEndpoint({
    gateway: app.gateway,
    audit: app.audit,
    tasks: app.tasks,
    store: app.store,
    bus: app.bus,
    catalog: app.policyDeps,
    drain: app.drain,
    tenantSlots: app.tenantSlots,
    metrics: app.metrics,
    log: app.log,
  });
  // Open streams would keep the listener from closing: they end first, and their clients reconnect elsewhere.
  app.addHook('preClose', (done) => {
    endpoint.close();
    done();
  });

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
          description: `The body is one JSON-RPC message of the MCP streamable HTTP transport. \`initialize\` answers with an \`Mcp-Session-Id\` header (unless \`mcpServer.sessions\` is false); later requests send it back, and one with an unknown session id (or another caller's) answers 404. A request without a session id is served statelessly. A JSON-RPC batch holds at most \`mcpServer.maxBatchMessages\` messages (a larger one answers 400 with JSON-RPC error -32600), and a session's cancellations and relay answers are bounded by \`mcpServer.signalRate\` (429). Both MCP eras are served here: a request whose \`params._meta\` carries \`io.modelcontextprotocol/protocolVersion\` (2026-07-28: \`server/discover\`, \`subscriptions/listen\`, the \`Mcp-Method\`/\`Mcp-Name\` headers) is answered statelessly with no session, any other by the 2025-11-25 era above.${unknownToolset}`,
          security: bearerSecurity,
          ...params,
          ...sessionId(false),
          response: mcpResponses,
        },
      },
      endpoint.post,
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
      endpoint.openStream,
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
      endpoint.endSession,
    );
  }
};

export const mcpRoutes = fp(routes, { name: 'toolgate-routes-mcp', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-store', 'toolgate-audit', 'toolgate-tasks', 'toolgate-policy-deps', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
