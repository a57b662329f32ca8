// Requests an upstream MCP server sends back while serving a call — elicitation/create, sampling/createMessage —
// relayed to the MCP client session that made the call (docs/mcp.md#elicitation-and-sampling).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, McpError, type CreateMessageResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';

export type RelayKind = 'elicitation' | 'sampling';

/** What the upstream asked, as the calling session must see it (the method and its params, untouched). */
export interface RelayRequest {
  kind: RelayKind;
  method: 'elicitation/create' | 'sampling/createMessage';
  params: Record<string, unknown>;
  /** The upstream that asked (`<scope>/<service>` as in the audit). */
  service: string;
}

/** The caller's side: forwards one request to the calling session and returns its answer, or throws RelayRefused. */
export type Relay = (request: RelayRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;

/** A relay that cannot happen (policy, capability, bounds, a REST caller): the upstream hears this message. */
export class RelayRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelayRefused';
  }
}

/**
 * The relay of the call being executed. The upstream's request arrives on the response stream of the
 * call's own POST; the SDK transport reads that stream in continuations of the call's async context, so
 * the handler below finds exactly the relay of the call that the upstream is serving — never another
 * call's, session's, user's or tenant's. Traffic outside a call (the GET stream, stdio) finds none and is
 * refused.
 */
const current = new AsyncLocalStorage<Relay>();

/** Runs `work` (one call through the execution path) with `relay` as the answer to its upstreams' requests. */
export function withRelay<T>(relay: Relay, work: () => Promise<T>): Promise<T> {
  return current.run(relay, work);
}

const NO_RELAY = 'the caller of this tool call cannot be asked (a REST caller, or traffic outside a call)';

async function relayed(kind: RelayKind, method: RelayRequest['method'], params: Record<string, unknown>, service: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  const relay = current.getStore();
  try {
    if (relay === undefined) throw new RelayRefused(NO_RELAY);
    return await relay({ kind, method, params, service }, signal);
  } catch (error) {
    // The spec's answer for a request the client will not serve: a JSON-RPC error with the reason.
    if (error instanceof McpError) throw error;
    throw new McpError(ErrorCode.InvalidRequest, `toolgate: ${method} not relayed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The capabilities toolgate declares to every upstream: it can relay both, per tenant and per caller. */
export const RELAY_CAPABILITIES = { elicitation: {}, sampling: {} } as const;

/** Installs the two request handlers on an upstream's client (before connect, with RELAY_CAPABILITIES declared). */
export function handleUpstreamRequests(client: Client, service: string): void {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => (await relayed('elicitation', 'elicitation/create', request.params, service, extra.signal)) as ElicitResult);
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => (await relayed('sampling', 'sampling/createMessage', request.params, service, extra.signal)) as CreateMessageResult);
}
