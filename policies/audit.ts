import { canonicalJson, sha256Hex } from '../src/registry/canonical-json.js';
import type { AuditEvent } from '../src/audit/types.js';
import { systemClock, type PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { passThrough, type Policy } from '../src/pipeline/types.js';
import type { ToolResult } from '../src/types.js';

export const auditOptionsSchema = { type: 'object', additionalProperties: false, properties: {} };

export function outcomeOf(result: ToolResult): AuditEvent['outcome'] {
  if (result.status === 'pending_approval') return 'pending_approval';
  return result.ok ? 'ok' : (result.error?.errorType ?? 'TOOL_EXCEPTION');
}

/**
 * One audit event per call, whatever happens inside (denied, limited, failed, pending). Outermost so it
 * sees every outcome. Arguments are recorded only as the SHA-256 of their canonical JSON, so secrets in
 * them never reach the log.
 */
export function auditPolicy(options: unknown, deps: PolicyDeps): Policy {
  parsePolicyOptions('audit', auditOptionsSchema, options);
  if (deps.audit.enabled === false) return passThrough;
  const clock = deps.clock ?? systemClock;
  return async (call, ctx, next) => {
    const started = clock.now();
    const argsSha256 = sha256Hex(canonicalJson(call.arguments));
    let result: ToolResult | undefined;
    try {
      result = await next(call, ctx);
      return result;
    } finally {
      deps.audit.write({
        time: new Date(started).toISOString(),
        requestId: ctx.requestId,
        callId: call.callId,
        tenant: ctx.principal.tenant,
        user: ctx.principal.user,
        tool: call.name,
        source: call.tool.source,
        argsSha256,
        outcome: result ? outcomeOf(result) : 'TOOL_EXCEPTION',
        durationMs: Math.max(0, clock.now() - started),
        approvalId: result?.approvalId ?? ctx.approval?.id ?? null,
      });
    }
  };
}
