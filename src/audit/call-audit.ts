// The one module that writes a call's audit event (docs/architecture.md#audit): the wrap-around the audit
// policy puts outermost in the chain, and the calls answered before they reached it — refused by the call
// path (unknown tool, bad arguments), by the /mcp endpoint for their params, or for want of a task. Nothing
// else writes `call` events (test/architecture/one-call-audit-writer.test.ts).
import { explanationOf } from '../cedar/explanation.js';
import { guardrailEventsOf } from './guardrail-events.js';
import type { JsonObject, Next, ScriptOrigin, Tool, ToolResult, ToolSourceKind } from '../call/types.js';
import { failureResult } from '../call/tool-result.js';
import { cancelledByCaller } from '../call/tool-error.js';
import { activeTraceId, isMadeCredentialRecord } from '../observability/tracing.js';
import { argumentsHash, boundedName, errorTypeOf, outcomeOf, type CallOrigin } from './events.js';
import type { AuditSink, CallAuditEvent } from './types.js';

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
 * Around the whole chain (the audit policy, outermost): one event per call, whatever happens inside (denied,
 * limited, failed, pending). Arguments are recorded only as the SHA-256 of their canonical JSON, so secrets
 * in them never reach the log. The run of an approved call is recorded by its approval decision
 * (routes/approvals.ts), which carries its outcome: one line per decision.
 */
export function auditAround(sink: AuditSink, clock: { now(): number }): (next: Next) => Next {
  return (next) => async (call, ctx) => {
    if (ctx.approval) return next(call, ctx);
    const started = clock.now();
    // With the sink off no event is written, and the digest of a megabyte of arguments is ~2 ms of the event loop.
    const argsSha256 = sink.enabled === false ? null : argumentsHash(call.arguments);
    let result: ToolResult | undefined;
    try {
      result = await next(call, ctx);
      return result;
    } finally {
      const answered = result ?? failureResult('TOOL_EXCEPTION', 'the call threw', { callId: call.callId, name: call.name });
      writeCall(sink, { requestId: ctx.requestId, tenant: ctx.principal.tenant, user: ctx.principal.user }, answered, {
        callId: call.callId,
        tool: call.name,
        source: call.tool.source,
        argsSha256,
        time: started,
        durationMs: Math.max(0, clock.now() - started),
        approvalId: answered.approvalId ?? null,
        cancelled: cancelledByCaller(ctx.cancellation),
      }, ctx.script);
    }
  };
}

/** A call answered before it reached the chain. */
export interface RefusedCall {
  origin: CallOrigin;
  /** The answer the caller got (a failed ToolResult). */
  result: ToolResult;
  /** The resolved tool, when the refusal came after resolution; else the name as sent is recorded (bounded). */
  tool?: Pick<Tool, 'name' | 'source'> | undefined;
  /** The parsed arguments, when they were a JSON object. */
  args?: JsonObject | undefined;
  /** When the call started, epoch ms. */
  time: number;
  durationMs: number;
  /** The code-mode script that made the call. */
  script?: ScriptOrigin | undefined;
}

/** Writes the event of a call refused before the chain: by the call path, the /mcp endpoint's params check, or the task rule. */
export function auditRefusal(sink: AuditSink, refusal: RefusedCall): void {
  if (sink.enabled === false) return;
  const { result, tool, args } = refusal;
  writeCall(sink, refusal.origin, result, {
    callId: result.callId,
    tool: tool?.name ?? result.name,
    source: tool?.source ?? null,
    argsSha256: args ? argumentsHash(args) : null,
    time: refusal.time,
    durationMs: refusal.durationMs,
    approvalId: null,
  }, refusal.script);
}

function writeCall(sink: AuditSink, origin: CallOrigin, result: ToolResult, call: CallFacts, script: ScriptOrigin | undefined): void {
  if (sink.enabled === false) return;
  sink.write(callEvent(origin, result, call, script));
}

/** The call event of a finished call. */
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
  // Written inside the call's span (audit policy, or the call path for refusals) when tracing is on.
  const traceId = activeTraceId();
  if (traceId !== undefined) event.traceId = traceId;
  const credential = credentialOf(result.trace);
  if (credential) event.credential = credential;
  const cedar = explanationOf(result);
  if (cedar) event.cedar = cedar;
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
