import type { Gateway } from '../gateway.js';
import { LazyAbort } from '../execution/lazy-abort.js';
import type { Logger, Principal, ToolResult } from '../types.js';
import type { ApprovalRecord } from './types.js';

/**
 * Runs an approved call through the one execution path as its requester (the principal verified when the
 * call was made), with `ctx.approval` set so the approval policy lets it through once. The model's own
 * arguments are replayed: validation, the deny re-check and bindings all apply again on the live config.
 */
export function resumeApproved(gateway: Gateway, record: ApprovalRecord, meta: { requestId: string; log: Logger; shutdown: LazyAbort }): Promise<ToolResult> {
  const principal: Principal = { tenant: record.tenant, user: record.requester.user, roles: record.requester.roles, claims: record.requester.claims };
  // A child of the shutdown source, let go when the call ends (handlers may leave listeners on their signal).
  const cancel = new LazyAbort(meta.shutdown);
  const running = gateway.execute(
    { name: record.call.name, arguments: record.call.arguments, callId: record.call.callId },
    {
      principal,
      requestId: meta.requestId,
      log: meta.log,
      signal: cancel, // the approver's request must not cancel the requester's call; a shutdown does
      depth: record.depth,
      mode: record.mode ?? 'default',
      defaultCallId: record.call.callId,
      approval: { id: record.id, approvedBy: record.decidedBy ?? '' },
    },
  );
  return running.finally(() => cancel.dispose());
}
