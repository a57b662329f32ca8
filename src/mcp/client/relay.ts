// Requests an upstream MCP server sends back while serving a call — elicitation/create, sampling/createMessage —
// relayed to the MCP client session that made the call (docs/mcp.md#elicitation-and-sampling).
import { AsyncLocalStorage } from 'node:async_hooks';
import { ProtocolError, ProtocolErrorCode, type Client, type CreateMessageResult, type ElicitResult } from '@modelcontextprotocol/client';
import type { OpenedTransport } from './upstream-transport.js';

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
 * The relay of the call being executed. Over HTTP the upstream's request (or a modern upstream's
 * `input_required` result) arrives on the response stream of the call's own POST; the SDK transport reads
 * that stream in continuations of the call's async context, so the handler below finds exactly the relay of
 * the call that the upstream is serving — never another call's, session's, user's or tenant's. A stdio
 * child's messages arrive outside any call's context: see InFlightCalls.
 */
const current = new AsyncLocalStorage<Relay>();

/** Runs `work` (one call through the execution path) with `relay` as the answer to its upstreams' requests. */
export function withRelay<T>(relay: Relay, work: () => Promise<T>): Promise<T> {
  return current.run(relay, work);
}

const NO_RELAY = 'the caller of this tool call cannot be asked (a REST caller, or traffic outside a call)';
const NOT_ONE_CALL = 'a stdio upstream can ask only while exactly one call runs on its connection, and another call is running';

/**
 * The calls running on one upstream connection, each with its relay. A stdio child's requests carry
 * nothing that names the call they serve, and its pipe is read outside every call's async context; while
 * exactly one call runs on the connection, though, that call is the only one the child can be serving, so
 * its caller is asked. With two or more calls in flight the request is refused (the upstream hears why), as
 * it is when the child asks between calls.
 */
export interface InFlightCalls {
  /**
   * One call starts on this connection: counted (and its relay known) until `leave` with the returned id.
   * A pair of calls, not a wrapper around the call: no promise or closure of its own on every upstream call.
   */
  enter(): number;
  leave(id: number): void;
  /** The relay to answer a request that arrived outside any call's context, or the reason there is none. */
  soleRelay(): Relay | string;
}

/** A connection whose requests always carry their call's context (HTTP): nothing to count. */
const UNCOUNTED: InFlightCalls = { enter: () => 0, leave: () => {}, soleRelay: () => NO_RELAY };

function createInFlightCalls(): InFlightCalls {
  let running = 0;
  // Only the calls that have a relay are kept by id (a REST caller's has none): such a call's enter and leave
  // touch a counter and nothing else.
  const relays = new Map<number, Relay>();
  let next = 0;
  return {
    enter() {
      next += 1;
      running += 1;
      const relay = current.getStore();
      if (relay !== undefined) relays.set(next, relay);
      return next;
    },
    leave(id) {
      running -= 1;
      relays.delete(id);
    },
    soleRelay() {
      if (running === 0) return NO_RELAY;
      if (running > 1) return NOT_ONE_CALL;
      // The one call running is the one with a relay, if any call kept one.
      const [relay] = relays.values();
      return relay ?? NO_RELAY;
    },
  };
}

async function relayed(kind: RelayKind, method: RelayRequest['method'], params: Record<string, unknown>, service: string, signal: AbortSignal, calls: InFlightCalls | undefined): Promise<Record<string, unknown>> {
  const relay = current.getStore() ?? calls?.soleRelay() ?? NO_RELAY;
  try {
    if (typeof relay === 'string') throw new RelayRefused(relay);
    return await relay({ kind, method, params, service }, signal);
  } catch (error) {
    // The spec's answer for a request the client will not serve: a JSON-RPC error with the reason.
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `toolgate: ${method} not relayed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The capabilities toolgate declares to every upstream: it can relay both, per tenant and per caller. In the
 * shape the SDKs check: form-mode elicitation is `elicitation.form` (the v1 SDK's `elicitInput()` refuses
 * a client that declares only `elicitation: {}`).
 */
export const RELAY_CAPABILITIES = { elicitation: { form: {} }, sampling: {} };

/**
 * Installs the two request handlers on an upstream's client (before connect, with RELAY_CAPABILITIES
 * declared); they also answer a modern upstream's `input_required`, which the SDK hands to them. Returns
 * the connection's in-flight calls, which tie a stdio child's requests to a call.
 */
export function handleUpstreamRequests(client: Client, service: string, kind: OpenedTransport['kind']): InFlightCalls {
  // Only a stdio child's requests arrive outside their call's context; on the other transports they never
  // consult the count, so their calls are not counted.
  const untied = kind === 'stdio' ? createInFlightCalls() : undefined;
  client.setRequestHandler('elicitation/create', async (request, ctx) => (await relayed('elicitation', 'elicitation/create', request.params, service, ctx.mcpReq.signal, untied)) as ElicitResult);
  client.setRequestHandler('sampling/createMessage', async (request, ctx) => (await relayed('sampling', 'sampling/createMessage', request.params, service, ctx.mcpReq.signal, untied)) as CreateMessageResult);
  return untied ?? UNCOUNTED;
}
