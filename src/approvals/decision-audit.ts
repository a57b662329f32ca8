import { boundedName, errorTypeOf, outcomeOf } from '../audit/events.js';
import type { ApprovalAuditEvent, AuditSink } from '../audit/types.js';
import type { Principal } from '../call/principal.js';
import { ApprovalError, type ApprovalRecord } from './types.js';

export interface Decision {
  decision: ApprovalAuditEvent['decision'];
  approvalId: string;
  decider: Principal;
  requestId: string;
}

/**
 * Runs an approval decision and writes its one audit event: who decided what and when, with the approved
 * run's outcome (or APPROVAL_DENIED), or `refused` and the request-level code when the decision was not
 * taken (not an approver, the requester, already decided, unknown id…).
 */
export async function auditedDecision(audit: AuditSink, decision: Decision, decide: () => Promise<ApprovalRecord>): Promise<ApprovalRecord> {
  const time = Date.now();
  const base = {
    event: 'approval',
    time,
    requestId: decision.requestId,
    tenant: decision.decider.tenant,
    user: decision.decider.user,
    decision: decision.decision,
    approvalId: boundedName(decision.approvalId),
  } as const;
  try {
    const record = await decide();
    const result = record.result;
    audit.write({
      ...base,
      requester: record.requester.user,
      tool: record.call.name,
      callId: record.call.callId,
      source: record.call.source,
      outcome: result ? outcomeOf(result) : 'ok',
      errorType: result ? errorTypeOf(result) : null,
      durationMs: Date.now() - time,
    });
    return record;
  } catch (error) {
    const code = error instanceof ApprovalError ? error.gatewayCode : 'TG_INTERNAL';
    audit.write({ ...base, requester: null, tool: null, callId: null, source: null, outcome: 'refused', errorType: code, durationMs: Date.now() - time });
    throw error;
  }
}
