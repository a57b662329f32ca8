// The MCP 2026-07-28 server of one /mcp request (docs/mcp.md#two-protocol-eras): an SDK v2 Server whose
// handlers are the legacy era's, over the same pool, execution path, catalog and tasks. The SDK does the
// protocol (server/discover, the `_meta` envelope, resultType, cache fields); toolgate supplies the rest.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tenantView, type McpEndpointDeps } from './deps.js';
import { CLIENT_CAPABILITIES_META_KEY, Server, type CallToolResult, type ServerContext, type Tool as McpTool } from '@modelcontextprotocol/server';
import { callOptionsFor, defaultCallId, requestCancellation, requestMode } from '../../http/call-options.js';
import { mcpEntry } from '../../registry/formats.js';
import { connectionOf, toCallToolResult } from './call-result.js';
import { answerModernCall, envelopeCapabilities, type ModernCall, type ModernQuestions } from './modern-questions.js';
import type { CatalogGovernance } from '../../catalog/resource-catalog-governance.js';
import { registerResourcesAndPrompts } from './serve-resources.js';
import { startTask, type TaskCallContext } from './task-calls.js';
import { taskIdParams, taskWireError } from './task-wire.js';
import { modernTask, modernTaskDetail } from './modern-tasks.js';
import { answerOnWire } from './wire-error.js';
import { untaskedCallRefusal } from './task-support.js';
import type { Tool } from '../../call/types.js';
import { Cancellation } from '../../shared/cancellation.js';

/** The Tasks extension (SEP-2663): an approval-gated call is a task for a client that declared it. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What toolgate declares to a modern client, in server/discover and nowhere else (no session to hold it). */
export const MODERN_CAPABILITIES = {
  tools: { listChanged: true },
  resources: {},
  prompts: {},
  extensions: { [TASKS_EXTENSION]: {} },
} as const;

export interface ModernRequest {
  deps: McpEndpointDeps;
  catalog: CatalogGovernance;
  /** Questions of upstreams to this era's callers, as `input_required` (modern-questions.ts). */
  questions: ModernQuestions;
  request: FastifyRequest;
  reply: FastifyReply;
  toolset: string | undefined;
}

/** The client declared the Tasks extension in this request's envelope. */
function declaresTasks(ctx: ServerContext): boolean {
  const capabilities: unknown = ctx.mcpReq.envelope && (ctx.mcpReq.envelope as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY];
  if (typeof capabilities !== 'object' || capabilities === null || !('extensions' in capabilities)) return false;
  const extensions = capabilities.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/** The handler groups of a modern server, by the methods they answer. */
type HandlerGroup = 'tools/list' | 'tools/call' | 'tasks' | 'catalog';
const GROUP_OF: Readonly<Record<string, HandlerGroup>> = {
  'tools/list': 'tools/list',
  'tools/call': 'tools/call',
  'tasks/get': 'tasks',
  'tasks/cancel': 'tasks',
  'resources/list': 'catalog',
  'resources/templates/list': 'catalog',
  'resources/read': 'catalog',
  'prompts/list': 'catalog',
  'prompts/get': 'catalog',
};
const ALL_GROUPS: ReadonlySet<HandlerGroup> = new Set(Object.values(GROUP_OF));
const ONE_GROUP = new Map([...ALL_GROUPS].map((group): [HandlerGroup, ReadonlySet<HandlerGroup>] => [group, new Set([group])]));

/**
 * The handler groups a request's body asks for. A server lives for one request, so it needs only those: the
 * capabilities it declares stay whole, and a body naming anything else (or that is not a plain message) gets
 * every handler, as a server built for any request would have.
 */
function groupsFor(body: unknown): ReadonlySet<HandlerGroup> {
  const method = typeof body === 'object' && body !== null && !Array.isArray(body) && 'method' in body ? body.method : undefined;
  const group = typeof method === 'string' && Object.hasOwn(GROUP_OF, method) ? GROUP_OF[method] : undefined;
  return (group !== undefined && ONE_GROUP.get(group)) || ALL_GROUPS;
}

/**
 * Whether the request's handlers need the web Request's signal to learn that the client left: tools/list and
 * tools/call do not (a call follows the reply's close itself, `requestCancellation`); the rest read it.
 */
export function needsRequestSignal(body: unknown): boolean {
  const groups = groupsFor(body);
  return !(groups.size === 1 && (groups.has('tools/call') || groups.has('tools/list')));
}

/**
 * One request's SDK v2 server: tools, resources, prompts and the Tasks extension's tasks/get and tasks/cancel,
 * with the handlers of what the request asks (groupsFor).
 */
export function modernServerFor({ deps, catalog, questions, request, reply, toolset }: ModernRequest): Server {
  const { principal } = request;
  const server = new Server({ name: toolset === undefined ? 'toolgate' : `toolgate/${toolset}`, version: '0.1.0' }, { capabilities: MODERN_CAPABILITIES });
  const groups = groupsFor(request.body);
  const tenantKnown = <T>(work: Promise<T>): Promise<T> => answerOnWire('tool', () => work);
  const tasks: TaskCallContext = {
    tasks: deps.tasks,
    owner: { tenant: principal.tenant, user: principal.user },
    session: undefined,
    requestId: request.id,
    drain: deps.drain,
    log: request.log,
    limits: () => deps.gateway.config.mcpServer.tasks,
    slots: deps.tenantSlots,
  };

  if (groups.has('tools/list')) {
    server.setRequestHandler('tools/list', async () => {
      const pool = await tenantKnown(deps.gateway.poolFor(principal, requestMode(request), toolset));
      // The 2026-07-28 Tool has no `execution`: whether a call becomes a task is the server's choice per call.
      return { tools: pool.tools.map((tool): McpTool => mcpEntry(pool, tool) as McpTool) };
    });
  }

  if (groups.has('tools/call')) serveCalls(server, { deps, questions, request, reply, toolset }, tasks, tenantKnown);
  if (groups.has('tasks')) serveTasks(server, tasks, request.id);
  if (groups.has('catalog')) {
    registerResourcesAndPrompts(server, { reachable: () => deps.gateway.mcpServicesFor(principal), log: request.log, trace: request.traceContext, caller: { principal, requestId: request.id, via: 'mcp', governance: catalog } });
  }
  return server;
}

/** tools/call: an approval-gated call as a task where the client declared the extension, any other through the one path. */
function serveCalls(
  server: Server,
  { deps, questions, request, reply, toolset }: Omit<ModernRequest, 'catalog'>,
  tasks: TaskCallContext,
  tenantKnown: <T>(work: Promise<T>) => Promise<T>,
): void {
  const { principal } = request;
  const clientGone = requestCancellation(reply, deps.drain);
  server.setRequestHandler('tools/call', async (call, ctx) => {
    const input = { name: call.params.name, arguments: call.params.arguments ?? {} };
    const wantsTask = declaresTasks(ctx);
    const mustBeTask = deps.gateway.config.mcpServer.tasks.approvalCalls === 'required';
    // Judged only when it can change the answer: a plain call pays no second lookup of its tool.
    const gated = wantsTask || mustBeTask ? await approvalGated(deps, request, toolset, call.params.name) : undefined;
    if (gated !== undefined && !wantsTask && mustBeTask) {
      // As in the legacy era: such a tool must be a task, so a client without the extension is refused (audited).
      const origin = { requestId: request.id, tenant: principal.tenant, user: principal.user };
      throw untaskedCallRefusal(deps.audit, origin, { tool: gated, callId: defaultCallId(undefined, 0), arguments: input.arguments });
    }
    if (gated !== undefined && wantsTask) {
      // A task outlives this request: its run is cancelled by tasks/cancel or a shutdown, not by the client leaving.
      const callId = defaultCallId(undefined, 0);
      const task = await startTask(tasks, { name: input.name, callId, ttl: undefined }, (signal) => deps.gateway.execute(input, callOptionsFor(request, callId, signal), toolset)).catch((error: unknown) => {
        throw taskWireError(error);
      });
      // A task-augmented result (SEP-2663): the SDK passes a non-`complete` resultType of tools/call through,
      // with the empty `content` it gives any tools/call result without one.
      const created: CallToolResult = { content: [], ...modernTask(task) };
      return created;
    }
    // Cancelled by the client closing this request (the modern era has no session to name a call in) or a shutdown;
    // a call its upstream asked something is held until the caller answers (modern-questions.ts).
    const callId = defaultCallId(undefined, 0);
    const ended = requestEnded(clientGone, ctx.mcpReq.signal);
    const modernCall: ModernCall = {
      principal,
      requestId: request.id,
      callId,
      tenant: (await tenantView(deps.gateway, principal.tenant))?.config,
      audit: deps.audit,
      name: input.name,
      arguments: input.arguments,
      toolset,
      capabilities: envelopeCapabilities(ctx.mcpReq.envelope),
      ended: ended.cancellation,
      run: async (cancellation) => {
        const options = callOptionsFor(request, callId, cancellation);
        // An upstream's progress goes to the client under its own token, on this request's stream (the SDK upgrades it).
        const token = call.params._meta?.progressToken;
        if (token !== undefined) {
          options.onProgress = (update) => {
            ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...update } }).catch(() => undefined);
          };
        }
        const result = await tenantKnown(deps.gateway.execute(input, options, toolset));
        return { result: toCallToolResult(result) as CallToolResult, ...connectionOf(result) };
      },
    };
    try {
      return await answerModernCall(questions, modernCall, ctx.mcpReq.requestState(), ctx.mcpReq.inputResponses);
    } finally {
      ended.stop();
    }
  });

}

/** The Tasks extension's tasks/get and tasks/cancel, for the caller's own tasks. */
function serveTasks(server: Server, tasks: TaskCallContext, requestId: string): void {
  server.setRequestHandler('tasks/get', { params: taskIdParams }, async ({ taskId }) => {
    const task = await tasks.tasks.get(tasks.owner, taskId).catch((error: unknown) => {
      throw taskWireError(error);
    });
    return modernTaskDetail(task);
  });
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async ({ taskId }) => {
    await tasks.tasks.cancel(tasks.owner, taskId, requestId).catch((error: unknown) => {
      throw taskWireError(error);
    });
    return {};
  });
}

/**
 * Ends when the client closes the request or a shutdown begins (`clientGone`), or the SDK ends the exchange
 * (`exchange`): followed through plain callbacks, as AbortSignal.any would cost a signal per call, and only
 * until the call has answered (`stop`), as the SDK aborts every exchange's signal after its answer.
 */
function requestEnded(clientGone: Cancellation, exchange: AbortSignal): { cancellation: Cancellation; stop: () => void } {
  const cancellation = new Cancellation();
  const end = (reason: unknown): void => cancellation.abort(reason);
  const unfollow = [clientGone.follow(end)];
  if (!cancellation.aborted) unfollow.push(Cancellation.of(exchange).follow(end));
  return {
    cancellation,
    stop: () => {
      for (const stop of unfollow) stop();
    },
  };
}

/** The tool, when the caller's approval policy holds it (judged from config: nothing runs); undefined otherwise, an unknown name included. */
async function approvalGated(deps: McpEndpointDeps, request: FastifyRequest, toolset: string | undefined, name: string): Promise<Tool | undefined> {
  const tool = await answerOnWire('tool', () => deps.gateway.toolCalled(request.principal, requestMode(request), name, toolset));
  return tool !== undefined && deps.gateway.approvalGate(request.principal)(tool) ? tool : undefined;
}
