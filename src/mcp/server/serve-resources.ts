// resources/* and prompts/* of toolgate's MCP endpoint (docs/architecture.md#resources-and-prompts): the
// handlers an SDK Server gets besides tools, over the catalog the REST routes share.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError, gatewayErrorOf } from '../../errors.js';
import type { Logger } from '../../types.js';
import { getPrompt, listPrompts, listResources, listResourceTemplates, readResource, type CatalogRequest, type ReachableServices } from './resource-catalog.js';
import type { TraceContext } from '../../observability/tracing.js';
import type { CatalogCaller } from './resource-catalog-governance.js';

/** What the server declares for them (no subscriptions, no list_changed: each listing is asked live). */
export const RESOURCE_AND_PROMPT_CAPABILITIES = { resources: {}, prompts: {} } as const satisfies ServerCapabilities;

/** The MCP spec's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

export interface ServeOptions {
  /** The caller's reachable services (app.gateway.mcpServicesFor(principal)). */
  reachable: ReachableServices;
  log: Logger;
  /** The HTTP request's span while tracing is on (upstream requests are client spans under it). */
  trace?: TraceContext;
  /** Who asks (reads and gets are audited and rate-limited for them). */
  caller: CatalogCaller;
}

/**
 * A JSON-RPC error for a read or get over the tenant's rate limit: in the implementation-defined server
 * error range, with the errorType and the wait in `data` (the REST routes answer 429 + Retry-After).
 */
export const RATE_LIMITED_CODE = -32029;

/**
 * A JSON-RPC error whose message goes on the wire as written (the SDK sends a thrown error's `code` and
 * `message`; its McpError would prefix "MCP error <code>:" to the message itself).
 */
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * Domain errors (src/errors.ts) as JSON-RPC errors, by their TG_* code; unknown and unreachable stay
 * indistinguishable. A code without a JSON-RPC counterpart of its own (an unknown tenant) is an invalid
 * request whose message starts with the code.
 */
async function answer<T>(kind: 'resource' | 'prompt', work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const gateway = gatewayErrorOf(error);
    if (!gateway || !(error instanceof DomainError)) throw error;
    switch (error.gatewayCode) {
      case 'TG_NOT_FOUND':
        throw new JsonRpcError(kind === 'resource' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, gateway.message);
      case 'TG_UPSTREAM_ERROR':
        throw new JsonRpcError(ErrorCode.InternalError, gateway.message);
      case 'TG_RATE_LIMITED':
        throw new JsonRpcError(RATE_LIMITED_CODE, gateway.message, { errorType: 'RATE_LIMITED', retryAfterMs: error.retryAfterMs });
      default:
        throw new JsonRpcError(ErrorCode.InvalidRequest, `${gateway.code}: ${gateway.message}`);
    }
  }
}

/** Registers resources/list, resources/templates/list, resources/read, prompts/list and prompts/get on one server. */
export function registerResourcesAndPrompts(server: Server, options: ServeOptions): void {
  const request = (signal: AbortSignal): CatalogRequest => ({ reachable: options.reachable, log: options.log, signal, trace: options.trace, caller: options.caller });
  server.setRequestHandler(ListResourcesRequestSchema, async (_message, extra) => answer('resource', async () => ({ resources: await listResources(request(extra.signal)) })));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_message, extra) =>
    answer('resource', async () => ({ resourceTemplates: await listResourceTemplates(request(extra.signal)) })),
  );
  server.setRequestHandler(ReadResourceRequestSchema, async (message, extra) => answer('resource', () => readResource(request(extra.signal), message.params.uri)));
  server.setRequestHandler(ListPromptsRequestSchema, async (_message, extra) => answer('prompt', async () => ({ prompts: await listPrompts(request(extra.signal)) })));
  server.setRequestHandler(GetPromptRequestSchema, async (message, extra) => answer('prompt', () => getPrompt(request(extra.signal), message.params.name, message.params.arguments)));
}
