// The caller's half of the elicitation and sampling relay (docs/mcp.md#elicitation-and-sampling): which
// relays an MCP session's client declared, and the Relay that forwards an upstream's request to it.
import { LRUCache } from 'lru-cache';
import { isInitializeRequest, specTypeSchemas } from '@modelcontextprotocol/server';
import type { AuditSink } from '../../audit/types.js';
import type { TenantConfig } from '../../config/types.js';
import { RelayRefused, type Relay, type RelayKind } from '../client/relay.js';
import type { StateStore } from '../../store/types.js';
import type { Principal } from '../../call/principal.js';

/** Per call: at most this many relayed requests, each at most this large both ways, answered within this time. */
export const MAX_RELAYS_PER_CALL = 8;
export const MAX_RELAY_CHARS = 64 * 1024;
export const RELAY_TIMEOUT_MS = 300_000;
/** Sessions whose capabilities this replica remembers. */
const MAX_KNOWN = 10_000;

/**
 * What a session's client declared at `initialize` that toolgate acts on: the relays it accepts (form
 * `elicitation`, `sampling`) and URL-mode elicitation (url-elicitation.ts). One record per session.
 */
export type ClientCapability = RelayKind | 'url-elicitation';

export function declaredCapabilities(body: unknown): ClientCapability[] {
  const messages = Array.isArray(body) ? body : [body];
  const init = messages.find((message) => isInitializeRequest(message));
  if (!init || !isInitializeRequest(init)) return [];
  const { elicitation, sampling } = init.params.capabilities;
  return [
    ...(elicitation ? (['elicitation'] as const) : []),
    ...(sampling ? (['sampling'] as const) : []),
    ...(elicitation?.url !== undefined ? (['url-elicitation'] as const) : []),
  ];
}

/**
 * The store record of what a session's client declared: `initialize` writes it with the session's lease
 * (sessions.ts), so it is renewed with the session and goes with it.
 */
export const capabilitiesRecord = (declared: readonly ClientCapability[]): string => JSON.stringify(declared);

export const relayKindsOf = (declared: readonly ClientCapability[]): RelayKind[] => declared.filter((kind): kind is RelayKind => kind !== 'url-elicitation');

export interface SessionCapabilities {
  /** This replica remembers what a new session's client declared (its record went to the store with the session). */
  remember(principal: Principal, session: string, declared: readonly ClientCapability[]): void;
  of(principal: Principal, session: string): Promise<readonly ClientCapability[]>;
}

/** A session's declared capabilities, in the store under its owner's key (another principal's lookup finds none). */
export function createSessionCapabilities(store: StateStore, keyOf: (principal: Principal, session: string) => string): SessionCapabilities {
  // Sessions this replica has seen: one store read for a session first seen here.
  const known = new LRUCache<string, readonly ClientCapability[]>({ max: MAX_KNOWN });
  const keep = (key: string, declared: readonly ClientCapability[]): readonly ClientCapability[] => {
    known.set(key, declared);
    return declared;
  };
  return {
    remember(principal, session, declared) {
      keep(keyOf(principal, session), declared);
    },
    async of(principal, session) {
      const key = keyOf(principal, session);
      const cached = known.get(key);
      if (cached !== undefined) return cached;
      const raw = await store.get(key);
      return keep(key, raw === null ? [] : (JSON.parse(raw) as ClientCapability[]));
    },
  };
}

export interface ClientRelayContext {
  principal: Principal;
  requestId: string;
  callId: string;
  tenant: TenantConfig;
  declared: readonly RelayKind[];
  /** Sends the request to this call's client (relay-responses.ts) and resolves with its answer. */
  ask(request: { method: string; params: Record<string, unknown> }, signal: AbortSignal, timeoutMs: number): Promise<Record<string, unknown>>;
  /** The call's own cancellation (the client went away, the session ended). */
  signal: AbortSignal;
  audit: AuditSink;
}

/**
 * The Relay of one tools/call over MCP: the tenant's `mcp.relay` policy, the client's declared
 * capability, and the per-call bounds decide; then the request goes to this call's client on this
 * call's response stream (relay-responses.ts), and its answer back to the upstream. Each relay is
 * audited (kind, service, outcome), never its content.
 */
export function relayToClient(context: ClientRelayContext): Relay {
  let count = 0;
  return async (request, signal) => {
    const started = Date.now();
    const write = (outcome: 'relayed' | 'refused' | 'failed', reason: string | null): void => {
      context.audit.write({
        event: 'relay',
        time: started,
        requestId: context.requestId,
        tenant: context.principal.tenant,
        user: context.principal.user,
        kind: request.kind,
        service: request.service,
        callId: context.callId,
        outcome,
        reason,
        durationMs: Date.now() - started,
      });
    };
    const refuse = (reason: string): never => {
      write('refused', reason);
      throw new RelayRefused(reason);
    };
    if (!context.tenant.mcp.relay[request.kind]) refuse(`the tenant's policy mcp.relay.${request.kind} is off`);
    if (!context.declared.includes(request.kind)) refuse(`the MCP client did not declare the ${request.kind} capability`);
    count += 1;
    if (count > MAX_RELAYS_PER_CALL) refuse(`more than ${MAX_RELAYS_PER_CALL} relayed requests in one call`);
    if (JSON.stringify(request.params).length > MAX_RELAY_CHARS) refuse(`the request is larger than ${MAX_RELAY_CHARS} characters`);
    const schema = request.kind === 'elicitation' ? specTypeSchemas.ElicitResult : specTypeSchemas.CreateMessageResult;
    let answer: Record<string, unknown>;
    try {
      const raw = await context.ask({ method: request.method, params: request.params }, AbortSignal.any([signal, context.signal]), RELAY_TIMEOUT_MS);
      const parsed = await schema['~standard'].validate(raw);
      if (parsed.issues !== undefined) throw new Error(`the client's answer is not a valid ${request.method} result`);
      answer = parsed.value;
    } catch (error) {
      write('failed', error instanceof Error ? error.message.slice(0, 200) : 'no answer');
      throw error;
    }
    if (JSON.stringify(answer).length > MAX_RELAY_CHARS) refuse(`the client's answer is larger than ${MAX_RELAY_CHARS} characters`);
    write('relayed', null);
    return answer;
  };
}
