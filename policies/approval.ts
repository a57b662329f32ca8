import picomatch from 'picomatch';
import { modelArgumentsOf } from '../src/bindings/model-arguments.js';
import type { PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { inertFor } from '../src/pipeline/fast-path.js';
import { passThrough, type Policy } from '../src/pipeline/types.js';
import { callFailure } from '../src/execution/tool-result.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../src/store/unavailable.js';
import type { ApprovalRecord } from '../src/approvals/types.js';

export const approvalOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tools: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    expiresMs: { type: 'integer', minimum: 1, default: 900_000 },
  },
};

/**
 * Human in the loop: a call to a matching tool is stored (with its bound arguments) and answered
 * `pending_approval`; nothing runs until an approver approves. The resumed call carries `ctx.approval`
 * and passes here once; the approvals service guarantees it is resumed at most once.
 */
export function approvalPolicy(options: unknown, deps: PolicyDeps): Policy {
  const { tools, expiresMs } = parsePolicyOptions<{ tools: string[]; expiresMs: number }>('approval', approvalOptionsSchema, options);
  if (tools.length === 0) return passThrough;
  const needsApproval = picomatch(tools, { dot: true });
  return inertFor(async (call, ctx, next) => {
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
      });
    } catch (error) {
      // Fails closed: without a stored request nobody can approve it, so the call does not run.
      if (!isStoreUnavailable(error)) throw error;
      return callFailure(call, 'UPSTREAM_ERROR', `${call.name} needs human approval, which cannot be requested while the state store is unavailable; the call did not run; retry later`, {
        retryAfterMs: STORE_RETRY_AFTER_MS,
      });
    }
    const expires = new Date(record.expiresAt).toISOString();
    return {
      callId: call.callId,
      name: call.name,
      ok: false,
      output: `${call.name} needs human approval and has not run yet (approvalId ${record.id}, expires ${expires}). Its result will be available once an approver decides.`,
      source: call.tool.source,
      durationMs: 0,
      truncated: false,
      trace: null,
      status: 'pending_approval',
      approvalId: record.id,
      ...(call.resolvedFrom ? { resolvedFrom: call.resolvedFrom } : {}),
    };
  }, (tool) => !needsApproval(tool.name));
}
