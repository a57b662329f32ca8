import { modelArgumentsOf } from '../bindings/model-arguments.js';
import { callFailure, pendingApprovalResult } from '../call/tool-result.js';
import { activeSpanLink } from '../observability/tracing.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../store/unavailable.js';
import type { PolicyContext, ToolCall, ToolResult } from '../call/types.js';
import { ApprovalError, type ApprovalRecord, type ApprovalService, type CreateApprovalInput } from './types.js';

/** How long a parked call waits and what may wait at once (the approval policy's options). */
export type ParkBounds = Pick<CreateApprovalInput, 'expiresMs' | 'bounds'>;

/**
 * Parks a call for a human (docs/governance.md#human-approval): stores it with its bound arguments and answers
 * `pending_approval`; nothing runs until an approver approves. Used by the approval policy and by budgets
 * whose `onLimit` is `approve`; `why` says what needs the approval. Fails closed: without a stored request
 * nobody can approve it, so the call does not run.
 */
export async function parkForApproval(approvals: ApprovalService, call: ToolCall, ctx: PolicyContext, answer: (result: ToolResult) => ToolResult, park: ParkBounds, why = 'needs human approval'): Promise<ToolResult> {
  let record: ApprovalRecord;
  try {
    record = await approvals.create({
      principal: ctx.principal,
      call: { name: call.name, arguments: modelArgumentsOf(call), boundArguments: call.arguments, callId: call.callId, source: call.tool.source, ...(call.resolvedFrom ? { resolvedFrom: call.resolvedFrom } : {}) },
      requestId: ctx.requestId,
      depth: ctx.depth,
      mode: ctx.mode,
      expiresMs: park.expiresMs,
      // The call's own span (tracing on): the approved run, in the approver's request, links back to it.
      traceOrigin: activeSpanLink(),
      bounds: park.bounds,
    });
  } catch (error) {
    if (error instanceof ApprovalError && error.code === 'TOO_LARGE') return answer(callFailure(call, 'VALIDATION_ERROR', error.message));
    if (error instanceof ApprovalError && error.code === 'TOO_MANY') return answer(callFailure(call, 'RATE_LIMITED', error.message, { retryAfterMs: error.retryAfterMs }));
    if (!isStoreUnavailable(error)) throw error;
    return answer(
      callFailure(call, 'UPSTREAM_ERROR', `${call.name} ${why}, which cannot be requested while the state store is unavailable; the call did not run; retry later`, {
        retryAfterMs: STORE_RETRY_AFTER_MS,
      }),
    );
  }
  const expires = new Date(record.expiresAt).toISOString();
  const output = `${call.name} ${why} and has not run yet (approvalId ${record.id}, expires ${expires}). Its result will be available once an approver decides.`;
  return answer(pendingApprovalResult(call, record.id, output));
}
