// A 2026-07-28 caller's tools/call that an upstream asks something (docs/mcp.md#questions-in-the-modern-era):
// the question goes back to the caller as an `input_required` result (SEP-2322) with a `requestState` toolgate
// seals itself (src/mcp/request-state.ts: AES-GCM, bound to tenant, user and call, expiring, one-time), and the
// caller's retry carrying that state and its answer continues the call. The call itself is held on the replica
// that runs it (held-calls.ts); a retry that lands on another replica reaches it over the bus. A call that needs
// the user's connection to an upstream (CONNECTION_REQUIRED) asks a caller that declared URL-mode elicitation to
// open the connect URL, and its retry runs the call again.
import { randomUUID } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequests, type InputRequiredResult } from '@modelcontextprotocol/server';
import type { AuditSink } from '../../audit/types.js';
import type { CredentialsConfig, TenantConfig } from '../../config/types.js';
import { canonicalJson, sha256Hex } from '../../shared/canonical-json.js';
import type { Cancellation } from '../../shared/cancellation.js';
import type { Logger } from '../../call/types.js';
import type { Principal } from '../../call/principal.js';
import { FLOW_TTL_MS } from '../../upstream-auth/connections.js';
import { withRelay, type Relay } from '../client/relay.js';
import { createRequestStateSealer, RequestStateRefused, type RequestStateBinding, type RequestStateSealer } from '../request-state.js';
import type { MessageBus } from '../../store/bus.js';
import type { StateStore } from '../../store/types.js';
import { createVault, type Vault } from '../../upstream-auth/vault.js';
import { createHeldCalls, type HeldCall, type HeldCalls, type HeldOutcome, type HeldQuestion, type Settled } from './held-calls.js';
import { RELAY_TIMEOUT_MS, relayToClient, type ClientCapability } from './relay-to-client.js';
import { JsonRpcError } from './wire-error.js';

/** What toolgate keeps in the states it mints: the held call and its replica (`h`, `c`), or "run the call again". */
type StatePayload = { k: 'held'; h: string; c: string } | { k: 'rerun' };

/** The SDK's own answer for a state its verify hook refuses: one text for every reason, so no oracle. */
export const invalidRequestState = (): ProtocolError => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

export const GONE_TEXT = 'toolgate: the call that asked this question is no longer running (it ended, timed out, or its replica stopped); call the tool again';

export interface ModernQuestions {
  held: HeldCalls;
  sealer: RequestStateSealer;
}

export interface ModernQuestionsDeps {
  bus: MessageBus;
  store: StateStore;
  log: Logger;
  /** The credential keys (`credentials`), read when a state is sealed or opened: a reload's keys apply at once. */
  credentials: () => CredentialsConfig;
}

/** One per endpoint: the replica's held calls and the sealer of the states that name them. */
export function createModernQuestions(deps: ModernQuestionsDeps): ModernQuestions {
  let current: { keys: CredentialsConfig; vault: Vault } | undefined;
  const vault = (): Vault => {
    const keys = deps.credentials();
    if (current?.keys !== keys) current = { keys, vault: createVault(keys) };
    return current.vault;
  };
  const lazy: Vault = {
    seal: (plaintext, context) => vault().seal(plaintext, context),
    open: (sealed, context) => vault().open(sealed, context),
    get ready() {
      return vault().ready;
    },
  };
  return { held: createHeldCalls(deps.bus, deps.log), sealer: createRequestStateSealer({ vault: lazy, store: deps.store, prefix: 'mcp-request-state:taken:' }) };
}

/** One modern tools/call, as this module needs it. */
export interface ModernCall {
  principal: Principal;
  requestId: string;
  callId: string;
  /** The tenant's config (its `mcp.relay` policy); undefined once a reload removed the tenant: nobody is asked. */
  tenant: TenantConfig | undefined;
  audit: AuditSink;
  name: string;
  arguments: Record<string, unknown>;
  toolset: string | undefined;
  /** The request's `clientCapabilities` envelope value, as sent. */
  capabilities: unknown;
  /** The request's own end (the client closed it, a shutdown). */
  ended: Cancellation;
  /** The call through the execution path, cancelled by `cancellation`; the finished call as the wire's result. */
  run(cancellation: Cancellation): Promise<{ result: CallToolResult; connectUrl?: string; service?: string }>;
}

/** What a modern request's envelope declares that toolgate acts on (as relay-to-client.ts reads `initialize`). */
export function declaredInEnvelope(capabilities: unknown): ClientCapability[] {
  if (typeof capabilities !== 'object' || capabilities === null) return [];
  const declared = capabilities as { elicitation?: unknown; sampling?: unknown };
  const elicitation = typeof declared.elicitation === 'object' && declared.elicitation !== null ? (declared.elicitation as { url?: unknown }) : undefined;
  return [
    ...(elicitation ? (['elicitation'] as const) : []),
    ...(typeof declared.sampling === 'object' && declared.sampling !== null ? (['sampling'] as const) : []),
    ...(elicitation?.url !== undefined ? (['url-elicitation'] as const) : []),
  ];
}

/** Read from an envelope (`_meta` lifted by the SDK): the client capabilities it declares. */
export const envelopeCapabilities = (envelope: unknown): unknown => (typeof envelope === 'object' && envelope !== null ? (envelope as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY] : undefined);

/** The call a state continues: the same tool, arguments and toolset, so a state never continues another call. */
export const stateBindingOf = (caller: { tenant: string; user: string }, call: Pick<ModernCall, 'name' | 'arguments' | 'toolset'>): RequestStateBinding => ({
  tenant: caller.tenant,
  user: caller.user,
  callId: sha256Hex(canonicalJson(['tools/call', call.toolset ?? null, call.name, call.arguments])),
});

function parsePayload(raw: string): StatePayload | undefined {
  try {
    const value = JSON.parse(raw) as Partial<{ k: unknown; h: unknown; c: unknown }>;
    if (value.k === 'rerun') return { k: 'rerun' };
    if (value.k === 'held' && typeof value.h === 'string' && typeof value.c === 'string') return { k: 'held', h: value.h, c: value.c };
  } catch {
    // not ours: refused below
  }
  return undefined;
}

/**
 * Answers one modern tools/call: a fresh call runs (and may come back as questions); a call carrying a state
 * continues the call the state names, with the caller's answers. A state that does not open for this caller and
 * call (tampered, replayed, expired, another tenant's or user's, another call's) is refused with the SDK's
 * -32602 "Invalid or expired requestState", the same for every reason.
 */
export async function answerModernCall(questions: ModernQuestions, call: ModernCall, requestState: unknown, inputResponses: Record<string, unknown> | undefined): Promise<CallToolResult | InputRequiredResult> {
  // Hashed only when a state is opened or sealed: a call that just answers needs none (a hash per call showed in
  // the modern era's profile, bench/results.md). The execution path never changes a call's arguments in place.
  let bound: RequestStateBinding | undefined;
  const binding = (): RequestStateBinding => (bound ??= stateBindingOf(call.principal, call));
  const owner = { tenant: call.principal.tenant, user: call.principal.user };
  if (requestState === undefined) return runFresh(questions, call, binding);
  if (typeof requestState !== 'string') throw invalidRequestState();
  let payload: StatePayload | undefined;
  try {
    payload = parsePayload(await questions.sealer.open(requestState, binding()));
  } catch (error) {
    if (error instanceof RequestStateRefused) throw invalidRequestState();
    throw error;
  }
  if (!payload) throw invalidRequestState();
  // A connection the caller was asked to make: the call runs again, through the whole chain, as any call.
  if (payload.k === 'rerun') return runFresh(questions, call, binding);
  const named = payload;
  return answer(questions, binding, () => named, await questions.held.resume(payload.h, payload.c, owner, inputResponses ?? {}, call.ended));
}

/** Starts the call with a relay that parks its upstreams' questions, and waits for its first outcome. */
async function runFresh(questions: ModernQuestions, call: ModernCall, binding: () => RequestStateBinding): Promise<CallToolResult | InputRequiredResult> {
  const held = questions.held.create({ tenant: call.principal.tenant, user: call.principal.user });
  const declared = declaredInEnvelope(call.capabilities);
  const relay = call.tenant ? relayFor(call, call.tenant, declared, held) : undefined;
  const work = (): Promise<Settled> =>
    call.run(held.cancellation).then(
      ({ result, connectUrl, service }): Settled =>
        connectUrl !== undefined && declared.includes('url-elicitation')
          ? { kind: 'connect', url: connectUrl, message: `${service ?? 'the service'} acts as you: connect your account, then the call runs again` }
          : { kind: 'done', result },
      (error: unknown): Settled => ({ kind: 'failed', error: wireErrorOf(error), cause: error }),
    );
  void (relay ? withRelay(relay, work) : work()).then((settled) => held.settle(settled));
  const outcome = await held.next(call.ended, undefined);
  return answer(questions, binding, () => ({ k: 'held', h: questions.held.replica, c: held.id }), outcome);
}

/** The modern caller's relay: the tenant's policy, the declared capabilities and the bounds, as for a legacy session. */
function relayFor(call: ModernCall, tenant: TenantConfig, declared: readonly ClientCapability[], held: HeldCall): Relay {
  return relayToClient({
    principal: call.principal,
    requestId: call.requestId,
    callId: call.callId,
    tenant,
    declared: declared.filter((kind) => kind !== 'url-elicitation') as Array<'elicitation' | 'sampling'>,
    ask: (question, signal, timeoutMs) => {
      // A URL-mode question needs its own capability; the SDK would refuse the whole answer (-32021) otherwise.
      if (question.method === 'elicitation/create' && question.params.mode === 'url' && !declared.includes('url-elicitation')) {
        return Promise.reject(new Error('the MCP client did not declare URL-mode elicitation'));
      }
      return held.ask(question as HeldQuestion, signal, timeoutMs);
    },
    // Read only when an upstream asks: the held call's signal is made then.
    get signal() {
      return held.signal;
    },
    audit: call.audit,
  });
}

/** What the caller hears of an outcome. */
function answer(questions: ModernQuestions, binding: () => RequestStateBinding, where: () => Extract<StatePayload, { k: 'held' }>, outcome: HeldOutcome): CallToolResult | InputRequiredResult {
  switch (outcome.kind) {
    case 'done':
      return outcome.result;
    case 'failed':
      // Here, the call's own error as the legacy era throws it; from another replica, its code and text.
      if (outcome.cause !== undefined) throw outcome.cause;
      throw new JsonRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    case 'gone':
      return { content: [{ type: 'text', text: GONE_TEXT }], isError: true };
    case 'connect': {
      const requestState = questions.sealer.seal(binding(), JSON.stringify({ k: 'rerun' } satisfies StatePayload), FLOW_TTL_MS);
      const elicitation = { method: 'elicitation/create', params: { mode: 'url', elicitationId: randomUUID(), url: outcome.url, message: outcome.message } } as const;
      return { resultType: 'input_required', inputRequests: { connect: elicitation } as InputRequests, requestState };
    }
    case 'input':
    case 'working': {
      // A fresh state each round (each opens once), naming the same held call.
      const requestState = questions.sealer.seal(binding(), JSON.stringify(where()), RELAY_TIMEOUT_MS);
      return outcome.kind === 'input' ? { resultType: 'input_required', inputRequests: outcome.questions as InputRequests, requestState } : { resultType: 'input_required', requestState };
    }
  }
}

/** A failed call's error as it crosses the bus: a JSON-RPC error keeps its code and text, anything else is internal. */
function wireErrorOf(error: unknown): { code: number; message: string; data?: unknown } {
  if (error instanceof JsonRpcError || error instanceof ProtocolError) return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
  return { code: ProtocolErrorCode.InternalError, message: 'Internal error' };
}
