// The caller's half of the elicitation and sampling relay (docs/mcp.md#elicitation-and-sampling): which
// relays an MCP session's client declared, and the Relay that forwards an upstream's request to it.
import { CreateMessageResultSchema, ElicitResultSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AuditSink } from '../../audit/types.js';
import type { TenantConfig } from '../../config/types.js';
import { RelayRefused, type Relay, type RelayKind } from '../client/relay.js';
import type { StateStore } from '../../store/types.js';
import type { Principal } from '../../types.js';

/** Per call: at most this many relayed requests, each at most this large both ways, answered within this time. */
export const MAX_RELAYS_PER_CALL = 8;
export const MAX_RELAY_CHARS = 64 * 1024;
export const RELAY_TIMEOUT_MS = 300_000;
/** How long a session's declared relays are kept in the store (a longer-lived session's relays are then refused). */
const REMEMBER_MS = 24 * 60 * 60 * 1000;
/** Sessions whose relays this replica knows (one store read for a session first seen here). */
const MAX_KNOWN = 10_000;

/** The relays an `initialize` body's client declared (its `elicitation` and `sampling` capabilities). */
export function declaredRelays(body: unknown): RelayKind[] {
  const messages = Array.isArray(body) ? body : [body];
  const init = messages.find((message) => isInitializeRequest(message));
  if (!init || !isInitializeRequest(init)) return [];
  const { capabilities } = init.params;
  return [...(capabilities.elicitation ? (['elicitation'] as const) : []), ...(capabilities.sampling ? (['sampling'] as const) : [])];
}

export interface SessionRelays {
  remember(principal: Principal, session: string, kinds: RelayKind[]): Promise<void>;
  of(principal: Principal, session: string): Promise<readonly RelayKind[]>;
}

/** A session's declared relays, in the store under its owner's key (another principal's lookup finds none). */
export function createSessionRelays(store: StateStore, keyOf: (principal: Principal, session: string) => string): SessionRelays {
  const known = new Map<string, readonly RelayKind[]>();
  const keep = (key: string, kinds: readonly RelayKind[]): readonly RelayKind[] => {
    if (known.size >= MAX_KNOWN) known.delete(known.keys().next().value ?? '');
    known.set(key, kinds);
    return kinds;
  };
  return {
    async remember(principal, session, kinds) {
      const key = keyOf(principal, session);
      keep(key, kinds);
      if (kinds.length > 0) await store.set(key, JSON.stringify(kinds), { ttlMs: REMEMBER_MS });
    },
    async of(principal, session) {
      const key = keyOf(principal, session);
      const cached = known.get(key);
      if (cached !== undefined) return cached;
      const raw = await store.get(key);
      return keep(key, raw === null ? [] : (JSON.parse(raw) as RelayKind[]));
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
    const schema = request.kind === 'elicitation' ? ElicitResultSchema : CreateMessageResultSchema;
    let answer: Record<string, unknown>;
    try {
      const raw = await context.ask({ method: request.method, params: request.params }, AbortSignal.any([signal, context.signal]), RELAY_TIMEOUT_MS);
      const parsed = schema.safeParse(raw);
      if (!parsed.success) throw new Error(`the client's answer is not a valid ${request.method} result`);
      answer = parsed.data;
    } catch (error) {
      write('failed', error instanceof Error ? error.message.slice(0, 200) : 'no answer');
      throw error;
    }
    if (JSON.stringify(answer).length > MAX_RELAY_CHARS) refuse(`the client's answer is larger than ${MAX_RELAY_CHARS} characters`);
    write('relayed', null);
    return answer;
  };
}
