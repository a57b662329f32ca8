// toolgate as an MCP server over streamable HTTP: what each /mcp request does once routes/mcp.ts has
// authenticated and validated it — the session lifecycle, the GET stream's keep-alive and the wiring of
// the session hub (docs/architecture.md#mcp-sessions).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tenantView, type McpEndpointDeps } from './deps.js';
import { Server, WebStandardStreamableHTTPServerTransport, type CallToolResult, type JSONRPCRequest, type Tool as McpTool } from '@modelcontextprotocol/server';
import { errors } from '../../errors.js';
import { callOptionsFor, defaultCallId, requestCancellation, requestMode } from '../../http/call-options.js';
import { Cancellation } from '../../shared/cancellation.js';
import { checkedMessages, invalidParams, type JsonRpcErrorResponse } from './request-params.js';
import { catalogEvent } from '../../audit/events.js';
import { auditRefusal } from '../../audit/call-audit.js';
import type { AuditSink } from '../../audit/types.js';
import type { TenantConfig } from '../../config/types.js';
import { failureResult } from '../../call/tool-result.js';
import { mcpEntry } from '../../registry/formats.js';
import { isStoreUnavailable } from '../../store/unavailable.js';
import { toCallToolResult } from './call-result.js';
import { asksForProgress, callsTool, cancelledRequestIds, opensSession } from './messages.js';
import { createCatalogGovernance, type CatalogGovernance } from '../../catalog/resource-catalog-governance.js';
import { registerResourcesAndPrompts, RESOURCE_AND_PROMPT_CAPABILITIES } from './serve-resources.js';
import { createSessionHub, type SessionHub } from './session-hub.js';
import { createMcpSessions, sessionSideKey } from './sessions.js';
import { openSseStream } from './sse-stream.js';
import { oversizedBatch, signalsIn, spendSignals } from './post-bounds.js';
import { createUrlElicitations, type UrlElicitations } from './url-elicitation.js';
import { answerOnWire } from './wire-error.js';
import { createModernEndpoint } from './modern-endpoint.js';
import { boundTaskResults, callAsTask, TASK_CAPABILITIES, type TaskCallContext } from './task-calls.js';
import { mcpTask, serveLegacyTasks } from './task-store.js';
import { taskWireError } from './task-wire.js';
import { sendWebResponse, toWebRequest } from './web-exchange.js';
import { LegacyResourceErrors } from './legacy-error-codes.js';
import { taskSupportOf, untaskedCallRefusal } from './task-support.js';
import { capabilitiesRecord, createSessionCapabilities, declaredCapabilities, relayKindsOf, relayToClient, type ClientCapability } from './relay-to-client.js';
import { createRelayRequests, type RelayRequests } from './relay-responses.js';
import { withRelay, type Relay } from '../client/relay.js';

/**
 * One SDK server per HTTP request (the transport is stateless even when the endpoint has sessions: the
 * session layer sits in front of it, see docs/architecture.md#mcp-sessions): its tools/list is the
 * principal's pool and its tools/call is the gateway's one execution path, exactly as /v1/execute uses it.
 * `session`: the MCP session the request belongs to, so a notifications/cancelled naming a call finds it.
 */
function serverFor(
  deps: McpEndpointDeps,
  catalog: CatalogGovernance,
  request: FastifyRequest,
  reply: FastifyReply,
  toolset: string | undefined,
  session: { id: string; hub: SessionHub; declared: readonly ClientCapability[]; requests: RelayRequests } | undefined,
  elicitations: UrlElicitations,
): Server {
  const tasks: TaskCallContext = {
    tasks: deps.tasks,
    owner: { tenant: request.principal.tenant, user: request.principal.user },
    session: session?.id,
    requestId: request.id,
    drain: deps.drain,
    log: request.log,
    limits: () => deps.gateway.config.mcpServer.tasks,
    slots: deps.tenantSlots,
  };
  const server = new Server(
    { name: toolset === undefined ? 'toolgate' : `toolgate/${toolset}`, version: '0.1.0' },
    { capabilities: { tools: { listChanged: session !== undefined }, ...RESOURCE_AND_PROMPT_CAPABILITIES, ...TASK_CAPABILITIES } },
  );
  serveLegacyTasks(server, tasks);
  boundTaskResults(server, tasks);
  registerResourcesAndPrompts(server, {
    reachable: () => deps.gateway.mcpServicesFor(request.principal),
    log: request.log,
    trace: request.traceContext,
    caller: { principal: request.principal, requestId: request.id, via: 'mcp', governance: catalog },
  });
  server.setRequestHandler('tools/list', async () => {
    const pool = await tenantKnown(deps.gateway.poolFor(request.principal, requestMode(request), toolset));
    // Any tool may be called as a task; an approval-gated one must be, when so configured (docs/mcp.md#tasks).
    const support = taskSupportOf(deps.gateway.config.mcpServer.tasks.approvalCalls, deps.gateway.approvalGate(request.principal));
    return { tools: pool.tools.map((tool): McpTool => ({ ...(mcpEntry(pool, tool) as McpTool), execution: { taskSupport: support(tool) } })) };
  });
  const clientGone = requestCancellation(reply, deps.drain);
  server.setRequestHandler('tools/call', async (call, ctx) => {
    if (call.params.task !== undefined) {
      // A task outlives this request: its run is cancelled by tasks/cancel or a shutdown, not by the client leaving.
      const callId = defaultCallId(undefined, 0);
      const input = { name: call.params.name, arguments: call.params.arguments ?? {} };
      const created = await callAsTask(tasks, { name: call.params.name, callId, ttl: call.params.task.ttl }, (signal) => deps.gateway.execute(input, callOptionsFor(request, callId, signal), toolset)).catch((error: unknown) => {
        throw taskWireError(error);
      });
      // SDK v2 checks a tools/call result against CallToolResult, whose `content` a CreateTaskResult lacks:
      // an empty one goes beside `task` (the 2025-11-25 CreateTaskResult is an open object).
      const answered: CallToolResult = { content: [], ...created };
      return answered;
    }
    if (deps.gateway.config.mcpServer.tasks.approvalCalls === 'required') await refuseUntaskedApproval(deps, request, toolset, call.params);
    // Cancelled by the MCP client (notifications/cancelled, which may arrive on any replica), by the HTTP
    // connection going away or by a shutdown. Followed through plain callbacks, let go when the call ends (so a
    // JSON-RPC batch of calls piles none up): AbortSignal.any would cost a signal per call, and the SDK aborts
    // the exchange's own signal after every answer.
    const tracked = session?.hub.trackCall(session.id, ctx.mcpReq.id);
    const ended = new Cancellation();
    const end = (reason: unknown): void => ended.abort(reason);
    const unfollow = [clientGone.follow(end), Cancellation.of(ctx.mcpReq.signal).follow(end), ...(tracked ? [Cancellation.of(tracked.signal).follow(end)] : [])];
    try {
      const options = callOptionsFor(request, defaultCallId(undefined, 0), ended);
      // An upstream's progress is relayed under the client's own token, on this request's event stream.
      const token = call.params._meta?.progressToken;
      if (token !== undefined) {
        options.onProgress = (update) => {
          ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...update } }).catch(() => undefined);
        };
      }
      const run = () => tenantKnown(deps.gateway.execute({ name: call.params.name, arguments: call.params.arguments ?? {} }, options, toolset));
      const tenant = await deps.gateway.loadTenant(request.principal.tenant);
      const relay = tenant && relayFor(deps, request, tenant.config, session, { server, requestId: ctx.mcpReq.id, callId: options.defaultCallId, ended });
      const result = relay ? await withRelay(relay, run) : await run();
      // A call needing the user's connection, from a client that declared URL-mode elicitation: the spec's error.
      const elicitation = await elicitations.errorFor(result, request.principal, session && { id: session.id, declaresUrl: session.declared.includes('url-elicitation') });
      if (elicitation) throw elicitation;
      return toCallToolResult(result);
    } finally {
      for (const stop of unfollow) stop();
      tracked?.done();
    }
  });
  return server;
}

/**
 * With `approvalCalls: required`, a call without `task` of a tool the caller's approval policy holds is
 * refused before anything runs (no approval is requested), as tools/list told the client.
 */
async function refuseUntaskedApproval(deps: McpEndpointDeps, request: FastifyRequest, toolset: string | undefined, params: { name: string; arguments?: Record<string, unknown> }): Promise<void> {
  const tool = await tenantKnown(deps.gateway.toolCalled(request.principal, requestMode(request), params.name, toolset));
  if (tool === undefined || !deps.gateway.approvalGate(request.principal)(tool)) return;
  const origin = { requestId: request.id, tenant: request.principal.tenant, user: request.principal.user };
  throw untaskedCallRefusal(deps.audit, origin, { tool, callId: defaultCallId(undefined, 0), arguments: params.arguments ?? {} });
}

/**
 * The relay of one tools/call: an upstream's elicitation or sampling request during the call goes to this
 * call's client, on this call's response stream (relay-to-client.ts); none once the tenant is gone (the caller's `tenant`).
 */
function relayFor(
  deps: McpEndpointDeps,
  request: FastifyRequest,
  tenant: TenantConfig,
  session: { id: string; declared: readonly ClientCapability[]; requests: RelayRequests } | undefined,
  call: { server: Server; requestId: string | number; callId: string; ended: Cancellation },
): Relay {
  const send = (message: JSONRPCRequest): Promise<void> => call.server.transport?.send(message, { relatedRequestId: call.requestId }) ?? Promise.reject(new Error('the call has no open stream'));
  return relayToClient({
    principal: request.principal,
    requestId: request.id,
    callId: call.callId,
    tenant,
    declared: relayKindsOf(session?.declared ?? []),
    ask: (question, signal, timeoutMs) => (session ? session.requests.ask(session.id, send, question, signal, timeoutMs) : Promise.reject(new Error('no MCP session'))),
    // Made only if an upstream asks something during the call.
    get signal() {
      return call.ended.signal;
    },
    audit: deps.audit,
  });
}

/**
 * A tenant removed by a reload between the HTTP check and this JSON-RPC message: the JSON-RPC error carries
 * the request-level code (the HTTP status is already sent by the transport).
 */
const tenantKnown = <T>(work: Promise<T>): Promise<T> => answerOnWire('tool', () => work);

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
      auditRefusal(audit, { origin, result, time, durationMs: 0 });
      continue;
    }
    const kind = method === 'resources/read' ? 'resource' : 'prompt';
    audit.write(catalogEvent(origin, { kind, via: 'mcp', name, service: null, argsSha256: null, time, durationMs: 0, errorType: 'VALIDATION_ERROR' }));
  }
}

/**
 * A JSON-RPC error with an HTTP error status, written as the transport writes its own (the route's error
 * schemas describe Fastify's error body, which would drop the JSON-RPC members).
 */
function sendJsonRpcError(request: FastifyRequest, reply: FastifyReply, status: number, body: JsonRpcErrorResponse): void {
  reply.hijack();
  reply.raw.writeHead(status, { 'content-type': 'application/json', 'x-request-id': request.id });
  reply.raw.end(JSON.stringify(body));
}

/** GET and DELETE while sessions are off: the transport spec allows 405 for both (a stateless server). */
function sessionsOff(reply: FastifyReply): Error {
  reply.header('allow', 'POST');
  return new errors.TG_METHOD_NOT_ALLOWED('MCP sessions are off (mcpServer.sessions: false): this endpoint is stateless, use POST');
}

// The same answer for an id nobody issued, an expired or ended one, and another principal's (the store
// lookup cannot tell them apart either, see src/mcp/server/sessions.ts): a session id is no oracle.
const sessionNotFound = (): Error => new errors.TG_NOT_FOUND('MCP session not found');

export type McpRequest = FastifyRequest<{ Params: { toolset?: string } }>;

const sessionHeader = (request: FastifyRequest): string | undefined => {
  const value = request.headers['mcp-session-id'];
  return typeof value === 'string' ? value : undefined;
};

export interface McpEndpoint {
  /** POST: one JSON-RPC message (or batch), answered by an SDK server over the streamable HTTP transport. */
  post(request: McpRequest, reply: FastifyReply): Promise<void>;
  /** GET: the session's server→client stream (tools/list_changed); one per session, the newest. */
  openStream(request: McpRequest, reply: FastifyReply): Promise<void>;
  /** DELETE: ends the session on every replica (its stream closes, its running calls are cancelled). */
  endSession(request: McpRequest, reply: FastifyReply): Promise<void>;
  /** Ends this replica's streams (before the listener closes: open streams would keep it open). */
  close(): void;
}

/**
 * The MCP endpoint of one app: session records in the state store, the hub that carries notifications and
 * cancellations between replicas, and the handlers of POST, GET and DELETE. With sessions
 * (`mcpServer.sessions`, the default) `initialize` issues an `Mcp-Session-Id`, GET opens the session's
 * notification stream and DELETE ends it; a POST without a session id is still served, statelessly.
 */
export function createMcpEndpoint(deps: McpEndpointDeps): McpEndpoint {
  // Audit and rate limit of resources/read and prompts/get (src/catalog/resource-catalog-governance.ts).
  const catalog = createCatalogGovernance(deps.catalog);
  const sessions = createMcpSessions(deps.store);
  const elicitations = createUrlElicitations(deps.store);
  const capabilities = createSessionCapabilities(deps.store, (principal, id) => sessionSideKey(principal, id, 'client'));
  const relayRequests = createRelayRequests(deps.bus, deps.log);
  const hub = createSessionHub({
    bus: deps.bus,
    log: deps.log,
    fingerprint: async (principal, mode, toolset) => {
      try {
        return (await deps.gateway.poolFor(principal, mode, toolset)).fingerprint;
      } catch {
        // The tenant or the toolset was removed: nothing this session could list.
        return undefined;
      }
    },
  });
  deps.metrics.watchMcpStreams(() => hub.openStreams());
  const modern = createModernEndpoint(deps, catalog, hub);
  // A task's status change reaches the stream of the session that created it, on whichever replica holds it.
  const stopTaskNotices = deps.tasks.onChange((_owner, task) => {
    if (task.session !== undefined) hub.notify(task.session, { jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...mcpTask(task) } });
  });
  const stopWatching = deps.gateway.onChange(() => hub.poolsMayHaveChanged());

  /** Checks the tenant (a reload may have removed it after authentication) and the toolset (404 for an unknown one). */
  const endpoint = async (request: McpRequest): Promise<string | undefined> => {
    // Compiled again if the bounded cache dropped it since authentication: only a tenant configured nowhere is unknown.
    if (!(await tenantView(deps.gateway, request.principal.tenant))) throw new errors.TG_UNKNOWN_TENANT();
    const toolset = request.params.toolset;
    if (toolset !== undefined) deps.gateway.assertToolset(request.principal, toolset);
    return toolset;
  };

  /** The session a POST belongs to: resumed, newly made by `initialize`, or none (stateless). */
  const sessionOf = async (request: McpRequest, reply: FastifyReply, toolset: string | undefined): Promise<string | null | undefined> => {
    const settings = deps.gateway.config.mcpServer;
    if (!settings.sessions) return undefined;
    const presented = sessionHeader(request);
    if (presented !== undefined) return (await sessions.resume(request.principal, presented, toolset, settings)) ? presented : null;
    if (!opensSession(request.body)) return undefined;
    try {
      const declared = declaredCapabilities(request.body);
      const { id, ended } = await sessions.create(request.principal, toolset, settings, { client: capabilitiesRecord(declared) });
      capabilities.remember(request.principal, id, declared);
      for (const old of ended) hub.end(old);
      deps.metrics.countMcpSession(request.principal.tenant);
      reply.raw.setHeader('mcp-session-id', id);
      return id;
    } catch (error) {
      // Everything else keeps working while the store is down: the client is served without a session.
      if (!isStoreUnavailable(error)) throw error;
      request.log.warn({ err: error }, 'MCP session not created: the state store is unavailable');
      return undefined;
    }
  };

  const post = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    const toolset = await endpoint(request);
    // The parser has consumed the body stream: the transport must not be left to read it again.
    if (request.body === undefined) throw new errors.TG_BAD_REQUEST('the body must be a JSON-RPC message');
    // Before anything of the body is handled: a batch is bounded whatever its messages are.
    const oversized = oversizedBatch(request.body, deps.gateway.config.mcpServer.maxBatchMessages);
    if (oversized) return sendJsonRpcError(request, reply, 400, oversized);
    const invalid = invalidParams(request.body);
    if (invalid) {
      auditRefusedMessages(deps.audit, request, invalid.error.message);
      return reply.send(invalid);
    }
    // A 2026-07-28 request is answered statelessly by the SDK v2 entry; everything else (initialize,
    // sessions, a client that never heard of the modern era) by the legacy path below, unchanged.
    if (modern.claims(request)) return modern.serve(request, reply, toolset);
    const session = await sessionOf(request, reply, toolset);
    if (session === null) throw sessionNotFound();
    if (session !== undefined) {
      // Cancellations and answers reach other replicas over the bus: counted per session, all or none.
      await spendSignals(deps.store, sessionSideKey(request.principal, session, 'signals'), deps.gateway.config.mcpServer.signalRate, signalsIn(request.body));
      const cancelled = cancelledRequestIds(request.body);
      if (cancelled.length > 0) hub.cancel(session, cancelled);
    }
    // The client's answers to relayed requests: delivered wherever the call that asked runs.
    if (session !== undefined && relayRequests.answers(session, request.body)) return reply.code(202).send();
    // What this session's client may be asked by an upstream: read only for a body that calls a tool.
    const declared = session !== undefined && callsTool(request.body) ? await capabilities.of(request.principal, session) : [];
    const server = serverFor(deps, catalog, request, reply, toolset, session === undefined ? undefined : { id: session, hub, declared, requests: relayRequests }, elicitations);
    // One JSON body per answer, unless a call asked for progress or its client may be asked something (a
    // relayed elicitation or sampling request): then an event stream carries those before the result.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(request.body) && relayKindsOf(declared).length === 0 });
    reply.hijack();
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(new LegacyResourceErrors(transport));
    // A hijacked reply skips Fastify's header handling: the session id set by sessionOf goes with the transport's headers.
    const response = await transport.handleRequest(toWebRequest(request, reply), { parsedBody: request.body });
    await sendWebResponse(reply, response, { 'x-request-id': request.id });
  };

  const openStream = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    const settings = deps.gateway.config.mcpServer;
    if (!settings.sessions) throw sessionsOff(reply);
    const toolset = await endpoint(request);
    const id = sessionHeader(request);
    if (id === undefined) throw new errors.TG_BAD_REQUEST('GET needs the Mcp-Session-Id that initialize returned');
    if (!(await sessions.resume(request.principal, id, toolset, settings))) throw sessionNotFound();
    const principal = request.principal;
    const mode = requestMode(request);
    const fingerprint = (await deps.gateway.poolFor(principal, mode, toolset)).fingerprint;
    reply.hijack();
    let keepAlive: NodeJS.Timeout | undefined;
    const stream = openSseStream(reply.raw, { 'x-request-id': request.id, 'mcp-session-id': id }, STREAM_BUFFER_BYTES, () => {
      clearInterval(keepAlive);
      hub.detach(id, stream);
    });
    // A session has one stream: this one replaces an older one (a client that reconnected before its old
    // socket was seen to close), which is closed wherever it is (MCP lets the server close a stream).
    await hub.attach(id, { principal, mode, toolset, stream, fingerprint });
    // The client left (or a newer stream replaced this one) while the announcement was on its way.
    if (stream.closed) return;
    stream.start();
    // While the stream is open the session is in use: its idle timer restarts, and a session ended or
    // expired in the store (DELETE on a replica whose message was lost) closes the stream.
    keepAlive = setInterval(() => {
      if (!stream.ping()) return;
      sessions.resume(principal, id, toolset, deps.gateway.config.mcpServer).then(
        (live) => live || stream.close(),
        () => undefined,
      );
    }, Math.min(KEEP_ALIVE_MS, Math.floor(settings.idleTimeoutMs / 2)));
    keepAlive.unref();
  };

  const endSession = async (request: McpRequest, reply: FastifyReply): Promise<void> => {
    if (!deps.gateway.config.mcpServer.sessions) throw sessionsOff(reply);
    const toolset = await endpoint(request);
    const id = sessionHeader(request);
    if (id === undefined) throw new errors.TG_BAD_REQUEST('DELETE needs the Mcp-Session-Id of the session to end');
    if (!(await sessions.end(request.principal, id, toolset))) throw sessionNotFound();
    hub.end(id);
    return reply.code(204).send();
  };


  return {
    post,
    openStream,
    endSession,
    close() {
      stopWatching();
      stopTaskNotices();
      relayRequests.close();
      hub.close();
      void modern.close();
    },
  };
}

/** A slow reader of a stream is cut off once this much waits for it (notifications are a few hundred bytes). */
const STREAM_BUFFER_BYTES = 64 * 1024;
/** How often an open stream is pinged and its session's idle timer restarted. */
const KEEP_ALIVE_MS = 25_000;

