import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import type { ErrorType, JsonObject, ToolResult } from '../call/types.js';
import { activeTraceId } from '../observability/tracing.js';
import type { AuditSink, CallOutcome, CatalogAuditEvent, CatalogErrorType, SecurityAuditEvent, SecurityEventKind } from './types.js';

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
