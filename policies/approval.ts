import Type from 'typebox';
import { MAX_PENDING_PER_TENANT } from '../src/approvals/service.js';
import { parkForApproval } from '../src/approvals/park.js';
import { ApprovalError, type ApprovalRecord } from '../src/approvals/types.js';
import { modelArgumentsOf } from '../src/bindings/model-arguments.js';
import { callFailure, pendingApprovalResult } from '../src/call/tool-result.js';
import { compileOptionGlobs } from '../src/patterns/name-globs.js';
import { activeSpanLink } from '../src/observability/tracing.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';

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
  const wrap: PolicyLayer['wrap'] = (next, answer) => (call, ctx) => {
    if (ctx.approval || !needsApproval(call.name)) return next(call, ctx);
    return parkForApproval(deps.approvals, call, ctx, answer, { expiresMs, bounds });
  };
  return { appliesTo: (tool) => needsApproval(tool.name), wrap };
}
