import Type from 'typebox';
import { explain } from '../src/cedar/explanation.js';
import { callFailure } from '../src/call/tool-result.js';
import { recordCedarDecision } from '../src/observability/tracing.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { isGatewayTool } from '../src/registry/tenant-view.js';

export const CedarOptions = Type.Object({}, { additionalProperties: false });

/** The caller's words for a Cedar refusal: those of a deny glob (src/registry/tenant-view.ts), so no rule is revealed. */
const REFUSAL = 'tool is not allowed for this tenant';

/**
 * The tenant's Cedar policies decide each call with its arguments (docs/governance.md#cedar-policies), once the
 * exposure rules admitted it. The determining policy ids go to the audit event and the call's span, never to
 * the caller. A tenant without `cedar` has no layer.
 */
export function cedarPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  parsePolicyOptions('cedar', CedarOptions, options);
  const engine = deps.cedar;
  if (!engine) return undefined;
  const clock = deps.clock ?? systemClock;
  return {
    appliesTo: (tool) => !isGatewayTool(tool),
    wrap: (next, answer) => async (call, ctx) => {
      const decision = engine.decideCall(ctx.principal, call.tool, call.arguments, { mode: ctx.mode, depth: ctx.depth, now: clock.now() });
      const explanation = { decision: decision.allowed ? ('allow' as const) : ('deny' as const), policies: decision.policies, ...(decision.error ? { error: decision.error } : {}) };
      recordCedarDecision(explanation.decision, decision.policies);
      if (!decision.allowed) return answer(explain(callFailure(call, 'PERMISSION_DENIED', REFUSAL), explanation));
      return explain(await next(call, ctx), explanation);
    },
  };
}
