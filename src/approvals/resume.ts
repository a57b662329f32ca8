import type { CallOptions, CallRequest } from '../execution/execute.js';
import { recordDecision, type TraceContext } from '../observability/tracing.js';
import type { Drain } from '../http/drain.js';
import { Cancellation } from '../shared/cancellation.js';
import type { Logger, ToolResult } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import type { ApprovalRecord } from './types.js';

/** The one execution path on the live snapshot (Gateway.execute), which the approved run goes through. */
export interface CallRunner {
  execute(request: CallRequest, options: CallOptions): Promise<ToolResult>;
}

/**
 * Runs an approved call through the one execution path as its requester (the principal verified when the
 * call was made), with `ctx.approval` set so the approval policy lets it through once. The model's own
 * arguments are replayed: validation, the deny re-check and bindings all apply again on the live config.
 */
export function resumeApproved(
  gateway: CallRunner,
  record: ApprovalRecord,
  meta: { requestId: string; log: Logger; drain: Pick<Drain, 'track'>; trace?: TraceContext },
): Promise<ToolResult> {
  // Traced: the approved run is a call in the approver's request, after the time it waited for a human.
  if (meta.trace !== undefined) recordDecision('approval', 'approved', record.createdAt, meta.trace);
  const principal: Principal = { tenant: record.tenant, user: record.requester.user, roles: record.requester.roles, claims: record.requester.claims };
  // The call's own cancellation: the approver's request must not cancel the requester's call; a shutdown does.
  const cancellation = new Cancellation();
  const release = meta.drain.track(cancellation);
  const running = gateway.execute(
    { name: record.call.name, arguments: record.call.arguments, callId: record.call.callId },
    {
      principal,
      requestId: meta.requestId,
      log: meta.log,
      cancellation,
      depth: record.depth,
      mode: record.mode ?? 'default',
      defaultCallId: record.call.callId,
      approval: { id: record.id, approvedBy: record.decidedBy ?? '' },
      trace: meta.trace,
      ...(record.traceOrigin ? { traceLink: record.traceOrigin } : {}),
    },
  );
  return running.finally(release);
}
