import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { errors } from '../src/errors.js';
import { UnknownTenantError } from '../src/gateway.js';
import { callOptionsFor, defaultCallId, requestCancellation, requestMode } from '../src/http/call-options.js';
import { invalidToolCall, toolCallNames } from '../src/mcp/call-params.js';
import { callEvent } from '../src/audit/events.js';
import type { AuditSink } from '../src/audit/types.js';
import { failureResult } from '../src/execution/tool-result.js';
import { mcpEntry } from '../src/registry/formats.js';
import { toCallToolResult } from '../src/mcp-server/call-result.js';
import { bearerSecurity, errorResponses, toolsetName } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/**
 * One SDK server per HTTP request (stateless transport): its tools/list is the principal's pool and
 * its tools/call is the gateway's one execution path, exactly as /v1/execute uses it.
 */
function serverFor(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, toolset: string | undefined): Server {
  const server = new Server({ name: toolset === undefined ? 'toolgate' : `toolgate/${toolset}`, version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const pool = await tenantKnown(app.gateway.poolFor(request.principal, requestMode(request), toolset));
    return { tools: pool.tools.map((tool) => mcpEntry(pool, tool) as McpTool) };
  });
  const clientGone = requestCancellation(reply, app.drain);
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    // Cancelled by the MCP client (notifications/cancelled), by the HTTP connection going away or by a
    // shutdown. AbortSignal.any adds no listener to its sources, so a JSON-RPC batch of calls piles none up.
    const options = callOptionsFor(request, defaultCallId(undefined, 0), AbortSignal.any([clientGone.signal, extra.signal]));
    const result = await tenantKnown(app.gateway.execute({ name: call.params.name, arguments: call.params.arguments ?? {} }, options, toolset));
    return toCallToolResult(result);
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

/** Each `tools/call` of a body refused for its params is a call that reached /mcp: one VALIDATION_ERROR line each. */
function auditRefusedCalls(audit: AuditSink, request: FastifyRequest, reason: string): void {
  if (audit.enabled === false) return;
  const origin = { requestId: request.id, tenant: request.principal.tenant, user: request.principal.user };
  const time = Date.now();
  for (const name of toolCallNames(request.body)) {
    const callId = defaultCallId(undefined, 0);
    const result = failureResult('VALIDATION_ERROR', reason, { callId, name });
    audit.write(callEvent(origin, result, { callId, tool: name, source: null, argsSha256: null, time, durationMs: 0, approvalId: null }));
  }
}

const methodNotAllowed = {
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: this endpoint is stateless, use POST' },
  id: null,
};

type McpRequest = FastifyRequest<{ Params: { toolset?: string } }>;

// The transport writes most answers itself (the reply is hijacked); a refusal sent before it is
// serialised with this schema, so it keeps every JSON-RPC member.
const mcpResponses = {
  200: {
    description: 'The JSON-RPC response',
    type: 'object',
    required: ['jsonrpc'],
    additionalProperties: true,
    properties: { jsonrpc: { type: 'string', enum: ['2.0'] }, id: { type: ['string', 'integer', 'null'] }, result: {}, error: { type: 'object', additionalProperties: true } },
  },
  202: { description: 'A notification or response was accepted (no body)', type: 'null' },
  ...errorResponses,
};

/**
 * toolgate as an MCP server over streamable HTTP (POST /mcp), Bearer auth as for the REST API;
 * `/mcp/<toolset>` is the same server narrowed to one of the caller's tenant's toolsets (a virtual server).
 */
const routes: RoutePlugin = async (app) => {
  const handle = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    // Checked again here, before the transport answers: a reload may have removed the tenant after authentication.
    if (!app.gateway.tenant(request.principal.tenant)) throw new errors.TG_UNKNOWN_TENANT();
    const toolset = request.params.toolset;
    // Before the reply is handed to the transport: an unknown toolset (or another tenant's) is a plain 404.
    if (toolset !== undefined) app.gateway.assertToolset(request.principal, toolset);
    // The parser has consumed the body stream: the transport must not be left to read it again.
    if (request.body === undefined) throw new errors.TG_BAD_REQUEST('the body must be a JSON-RPC message');
    const invalid = invalidToolCall(request.body);
    if (invalid) {
      auditRefusedCalls(app.governance.audit, request, invalid.error.message);
      return reply.send(invalid);
    }
    const server = serverFor(app, request, reply, toolset);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
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

  for (const url of ['/mcp', '/mcp/:toolset'] as const) {
    const narrowed = url !== '/mcp';
    app.post<{ Params: { toolset?: string } }>(
      url,
      {
        onRequest: app.authenticate,
        // One tenant slot per MCP request, as for /v1/execute, held until it is answered.
        config: { runsCalls: true },
        schema: {
          tags: ['tools'],
          operationId: narrowed ? 'mcpToolset' : 'mcp',
          summary: narrowed
            ? "One toolset as an MCP server: tools/list and tools/call see only that subset of the caller's pool"
            : "toolgate as an MCP server (streamable HTTP, stateless): tools/list is the caller's pool, tools/call the governed execution path",
          description: `The body is one JSON-RPC message of the MCP streamable HTTP transport. GET and DELETE ${narrowed ? '/mcp/{toolset}' : '/mcp'} answer 405 with \`Allow: POST\`: a stateless server has no stream to open and no session to end.${narrowed ? ' An unknown toolset, or one of another tenant, answers 404.' : ''}`,
          security: bearerSecurity,
          ...(narrowed ? { params: { type: 'object', required: ['toolset'], properties: { toolset: toolsetName } } } : {}),
          response: mcpResponses,
        },
      },
      handle,
    );

    // Stateless: no server-initiated stream to GET and no session to DELETE (the transport spec allows 405 for both).
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url,
        onRequest: app.authenticate,
        // Not in the document: an operation that can only fail would be a useless method in a generated client.
        schema: { hide: true },
        handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(methodNotAllowed),
      });
    }
  }
};

export const mcpRoutes = fp(routes, { name: 'toolgate-routes-mcp', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-governance', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
