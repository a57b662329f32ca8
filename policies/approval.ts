import Type from 'typebox';
import { MAX_PENDING_PER_TENANT } from '../src/approvals/service.js';
import { ApprovalError, type ApprovalRecord } from '../src/approvals/types.js';
import { modelArgumentsOf } from '../src/bindings/model-arguments.js';
import { callFailure, pendingApprovalResult } from '../src/call/tool-result.js';
import { compileOptionGlobs } from '../src/patterns/name-globs.js';
import { activeSpanLink } from '../src/observability/tracing.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../src/store/unavailable.js';

export const ApprovalOptions = Type.Object(
  {
    tools: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    expiresMs: Type.Integer({ minimum: 1, default: 900_000 }),
    // What may wait for a human at once (docs/security-model.md#limits): a request beyond is answered
    // RATE_LIMITED, arguments beyond the size VALIDATION_ERROR; neither runs nor is stored.
    maxPendingPerUser: Type.Integer({ minimum: 1, maximum: MAX_PENDING_PER_TENANT, default: 20 }),
    maxPendingPerTenant: Type.Integer({ minimum: 1, maximum: MAX_PENDING_PER_TENANT, default: 200 }),
    maxArgumentsBytes: Type.Integer({ minimum: 1, maximum: 16_777_216, default: 65_536 }),
  },
  { additionalProperties: false },
);

/**
 * Human in the loop: a call to a matching tool is stored (with its bound arguments) and answered
 * `pending_approval`; nothing runs until an approver approves. The resumed call carries `ctx.approval`
 * and passes here once; the approvals service guarantees it is resumed at most once.
 */
export function approvalPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  const { tools, expiresMs, ...bounds } = parsePolicyOptions('approval', ApprovalOptions, options);
  if (tools.length === 0) return undefined;
  const needsApproval = compileOptionGlobs('policies.approval.tools', tools);
  const wrap: PolicyLayer['wrap'] = (next, answer) => async (call, ctx) => {
    if (ctx.approval || !needsApproval(call.name)) return next(call, ctx);
    let record: ApprovalRecord;
    try {
      record = await deps.approvals.create({
        principal: ctx.principal,
        call: { name: call.name, arguments: modelArgumentsOf(call), boundArguments: call.arguments, callId: call.callId, source: call.tool.source, ...(call.resolvedFrom ? { resolvedFrom: call.resolvedFrom } : {}) },
        requestId: ctx.requestId,
        depth: ctx.depth,
        mode: ctx.mode,
        expiresMs,
        // The call's own span (tracing on): the approved run, in the approver's request, links back to it.
        traceOrigin: activeSpanLink(),
        bounds,
      });
    } catch (error) {
      if (error instanceof ApprovalError && error.code === 'TOO_LARGE') return answer(callFailure(call, 'VALIDATION_ERROR', error.message));
      if (error instanceof ApprovalError && error.code === 'TOO_MANY') return answer(callFailure(call, 'RATE_LIMITED', error.message, { retryAfterMs: error.retryAfterMs }));
      // Fails closed: without a stored request nobody can approve it, so the call does not run.
      if (!isStoreUnavailable(error)) throw error;
      return answer(
        callFailure(call, 'UPSTREAM_ERROR', `${call.name} needs human approval, which cannot be requested while the state store is unavailable; the call did not run; retry later`, {
          retryAfterMs: STORE_RETRY_AFTER_MS,
        }),
      );
    }
    const expires = new Date(record.expiresAt).toISOString();
    const output = `${call.name} needs human approval and has not run yet (approvalId ${record.id}, expires ${expires}). Its result will be available once an approver decides.`;
    return answer(pendingApprovalResult(call, record.id, output));
  };
  return { appliesTo: (tool) => needsApproval(tool.name), wrap };
}
