// resources/* and prompts/* of toolgate's MCP endpoint (docs/architecture.md#resources-and-prompts): the
// handlers an SDK Server gets besides tools, over the catalog the REST routes share.
import type { Server, ServerCapabilities } from '@modelcontextprotocol/server';
import type { Logger } from '../../call/types.js';
import { getPrompt, listPrompts, listResources, listResourceTemplates, readResource, type CatalogRequest, type ReachableServices } from '../../catalog/resource-catalog.js';
import type { TraceContext } from '../../observability/tracing.js';
import type { CatalogCaller } from '../../catalog/resource-catalog-governance.js';
import { answerOnWire } from './wire-error.js';

/** What the server declares for them (no subscriptions, no list_changed: each listing is asked live). */
export const RESOURCE_AND_PROMPT_CAPABILITIES = { resources: {}, prompts: {} } as const satisfies ServerCapabilities;


export interface ServeOptions {
  /** The caller's reachable services (the gateway's mcpServicesFor(principal)). */
  reachable: ReachableServices;
  log: Logger;
  /** The HTTP request's span while tracing is on (upstream requests are client spans under it). */
  trace?: TraceContext;
  /** Who asks (reads and gets are audited and rate-limited for them). */
  caller: CatalogCaller;
}

/** Domain errors of a read or get on the JSON-RPC wire (wire-error.ts). */
const answer = <T>(kind: 'resource' | 'prompt', work: () => Promise<T>): Promise<T> => answerOnWire(kind, work);

/** The five answers, the same for both MCP eras. */
function catalogAnswers(options: ServeOptions) {
  const request = (signal: AbortSignal): CatalogRequest => ({ reachable: options.reachable, log: options.log, signal, trace: options.trace, caller: options.caller });
  return {
    listResources: (signal: AbortSignal) => answer('resource', async () => ({ resources: await listResources(request(signal)) })),
    listResourceTemplates: (signal: AbortSignal) => answer('resource', async () => ({ resourceTemplates: await listResourceTemplates(request(signal)) })),
    readResource: (signal: AbortSignal, uri: string) => answer('resource', () => readResource(request(signal), uri)),
    listPrompts: (signal: AbortSignal) => answer('prompt', async () => ({ prompts: await listPrompts(request(signal)) })),
    getPrompt: (signal: AbortSignal, name: string, args: Record<string, string> | undefined) => answer('prompt', () => getPrompt(request(signal), name, args)),
  };
}

/** Registers resources/list, resources/templates/list, resources/read, prompts/list and prompts/get on one request's server, of either era. */
export function registerResourcesAndPrompts(server: Server, options: ServeOptions): void {
  const answers = catalogAnswers(options);
  server.setRequestHandler('resources/list', async (_message, ctx) => answers.listResources(ctx.mcpReq.signal));
  server.setRequestHandler('resources/templates/list', async (_message, ctx) => answers.listResourceTemplates(ctx.mcpReq.signal));
  server.setRequestHandler('resources/read', async (message, ctx) => answers.readResource(ctx.mcpReq.signal, message.params.uri));
  server.setRequestHandler('prompts/list', async (_message, ctx) => answers.listPrompts(ctx.mcpReq.signal));
  server.setRequestHandler('prompts/get', async (message, ctx) => answers.getPrompt(ctx.mcpReq.signal, message.params.name, message.params.arguments));
}
