import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import type { ErrorType, JsonObject, ScriptOrigin, ToolResult, ToolSourceKind } from '../types.js';
import { activeTraceId, isMadeCredentialRecord } from '../observability/tracing.js';
import { guardrailEventsOf } from './guardrail-events.js';
import type { AuditSink, CallAuditEvent, CallOutcome, CatalogAuditEvent, CatalogErrorType, SecurityAuditEvent, SecurityEventKind } from './types.js';

/** Longest caller-sent name kept in an audit event: a probe with a megabyte-long name stays one short line. */
const MAX_AUDITED_NAME = 128;

/** The name as the caller sent it, cut to MAX_AUDITED_NAME characters with the number of dropped ones. */
export function boundedName(name: string): string {
  return name.length <= MAX_AUDITED_NAME ? name : `${name.slice(0, MAX_AUDITED_NAME)}…[+${name.length - MAX_AUDITED_NAME} chars]`;
}

/** The errorType of a failed call, null for a success or a call waiting for approval. */
export function errorTypeOf(result: ToolResult): ErrorType | null {
  if (result.ok || result.status === 'pending_approval') return null;
  return result.error?.errorType ?? 'TOOL_EXCEPTION';
}

export function outcomeOf(result: ToolResult): CallOutcome {
  if (result.status === 'pending_approval') return 'pending_approval';
  return errorTypeOf(result) ?? 'ok';
}

export const argumentsHash = (args: JsonObject): string => sha256Hex(canonicalJson(args));

/** Who made a call, as every call event records it. */
export interface CallOrigin {
  requestId: string;
  tenant: string;
  user: string;
}

/** What a call line records besides who made it and what it answered. */
export interface CallFacts {
  callId: string;
  /** The resolved tool's name, or the name as the caller sent it (bounded here). */
  tool: string;
  source: ToolSourceKind | null;
  /** SHA-256 of the canonical arguments (argumentsHash), null when they were not a JSON object. */
  argsSha256: string | null;
  /** When the call started, epoch ms. */
  time: number;
  durationMs: number;
  approvalId: string | null;
  /** Its caller gave up on it (the client hung up or cancelled). */
  cancelled?: boolean;
}

/**
 * Writes one call line: the one writer of `call` events, for whatever answered the call — the audit policy,
 * a refusal before the policy chain (src/execution/execute.ts), an /mcp `tools/call` refused for its params.
 * `script`: the code-mode script that made the call. Nothing is built while the sink is off.
 */
export function auditCall(audit: AuditSink, origin: CallOrigin, result: ToolResult, call: CallFacts, script?: ScriptOrigin): void {
  if (audit.enabled === false) return;
  audit.write(callEvent(origin, result, call, script));
}

/** The call event of a finished call, as auditCall writes it. */
export function callEvent(origin: CallOrigin, result: ToolResult, call: CallFacts, script?: ScriptOrigin): CallAuditEvent {
  const event: CallAuditEvent = {
    event: 'call',
    time: call.time,
    requestId: origin.requestId,
    callId: call.callId,
    tenant: origin.tenant,
    user: origin.user,
    tool: boundedName(call.tool),
    source: call.source,
    argsSha256: call.argsSha256,
    outcome: call.cancelled === true && !result.ok ? 'cancelled' : outcomeOf(result),
    errorType: errorTypeOf(result),
    durationMs: call.durationMs,
    approvalId: call.approvalId,
  };
  if (script !== undefined) {
    event.scriptId = script.scriptId;
    event.parentCallId = script.parentCallId;
  }
  // Written inside the call's span (audit policy, or the execution path for refusals) when tracing is on.
  const traceId = activeTraceId();
  if (traceId !== undefined) event.traceId = traceId;
  const credential = credentialOf(result.trace);
  if (credential) event.credential = credential;
  const guardrails = guardrailEventsOf(result);
  if (guardrails) event.guardrails = guardrails;
  return event;
}

/**
 * The upstream credential a call carried, as the executors of services with `auth` put it in the trace
 * (docs/security-model.md#upstream-identity): its kind and a hash prefix, never the token. Only a record the
 * executor made counts: an upstream without `auth` may put a look-alike into its own result's trace.
 */
function credentialOf(trace: unknown): CallAuditEvent['credential'] {
  if (typeof trace !== 'object' || trace === null || !('credential' in trace)) return undefined;
  const credential = trace.credential;
  return isMadeCredentialRecord(credential) ? { kind: credential.kind, tokenHash: credential.tokenHash } : undefined;
}

/** The event of a finished resources/read or prompts/get (`time`: its start, epoch ms). */
export function catalogEvent(
  origin: CallOrigin,
  read: { kind: 'resource' | 'prompt'; via: CatalogAuditEvent['via']; name: string; service: string | null; argsSha256: string | null; time: number; durationMs: number; errorType: CatalogErrorType | null },
): CatalogAuditEvent {
  const event: CatalogAuditEvent = {
    event: read.kind === 'resource' ? 'resource_read' : 'prompt_get',
    time: read.time,
    requestId: origin.requestId,
    tenant: origin.tenant,
    user: origin.user,
    via: read.via,
    name: boundedName(read.name),
    service: read.service,
    argsSha256: read.argsSha256,
    outcome: read.errorType ?? 'ok',
    errorType: read.errorType,
    durationMs: read.durationMs,
  };
  const traceId = activeTraceId();
  if (traceId !== undefined) event.traceId = traceId;
  return event;
}

/** What a security event says; who and from where come from the request (see auditSecurityEvent). */
export interface SecurityEventInput {
  kind: SecurityEventKind;
  outcome: SecurityAuditEvent['outcome'];
  reason: string;
  tenant: string | null;
  user: string | null;
  target?: string | null;
  /** Operator-only detail (never in the copy tenant admins read). */
  detail?: string;
}

/**
 * Writes one security event (the one writer of `security` lines) for an HTTP request: its id and the client
 * address Fastify resolved (`request.ip`). Texts are bounded like names, so a hostile value stays one short line.
 */
export function auditSecurityEvent(audit: AuditSink, request: { id: string; ip: string }, input: SecurityEventInput): void {
  if (audit.enabled === false) return;
  const event: SecurityAuditEvent = {
    event: 'security',
    time: Date.now(),
    requestId: request.id,
    kind: input.kind,
    tenant: input.tenant === null ? null : boundedName(input.tenant),
    user: input.user === null ? null : boundedName(input.user),
    clientAddress: request.ip,
    outcome: input.outcome,
    reason: boundedName(input.reason),
    target: input.target === undefined || input.target === null ? null : boundedName(input.target),
  };
  if (input.detail !== undefined) event.detail = boundedName(input.detail);
  const traceId = activeTraceId();
  if (traceId !== undefined) event.traceId = traceId;
  audit.write(event);
}
