import Type from 'typebox';
import { argumentsHash, auditCall } from '../src/audit/events.js';
import { cancelledByCaller } from '../src/call/tool-error.js';
import { failureResult } from '../src/call/tool-result.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import type { ToolResult } from '../src/call/types.js';

export const AuditOptions = Type.Object({}, { additionalProperties: false });

/**
 * One audit event per call, whatever happens inside (denied, limited, failed, pending). Outermost so it
 * sees every outcome; calls refused before the chain are audited by the execution path
 * (src/execution/execute.ts). Arguments are recorded only as the SHA-256 of their canonical JSON, so
 * secrets in them never reach the log. The run of an approved call is recorded by its approval decision
 * (routes/approvals.ts), which carries its outcome: one line per decision.
 */
export function auditPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  parsePolicyOptions('audit', AuditOptions, options);
  if (deps.audit.enabled === false) return undefined;
  const clock = deps.clock ?? systemClock;
  const wrap: PolicyLayer['wrap'] = (next) => async (call, ctx) => {
    if (ctx.approval) return next(call, ctx);
    const started = clock.now();
    const argsSha256 = argumentsHash(call.arguments);
    let result: ToolResult | undefined;
    try {
      result = await next(call, ctx);
      return result;
    } finally {
      const answered = result ?? failureResult('TOOL_EXCEPTION', 'the call threw', { callId: call.callId, name: call.name });
      auditCall(deps.audit, { requestId: ctx.requestId, tenant: ctx.principal.tenant, user: ctx.principal.user }, answered, {
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
  return { wrap };
}
