import { callFailure } from '../src/call/tool-result.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyContext, PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { createWindowLimit, RateLimitOptions, STORE_DOWN_MESSAGE, decideWindow, windowLimitOf } from '../src/rate-limit/window-limit.js';
import type { WindowHit } from '../src/store/types.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../src/store/unavailable.js';
import type { ToolCall, ToolResult } from '../src/call/types.js';

export { RateLimitOptions };

/**
 * Sliding-window limit in the shared store (one atomic `hitWindow`, so N replicas count together).
 * The key always includes the tenant: one tenant can never spend another's budget. The limit, its key and
 * its decision are src/rate-limit/window-limit.ts's, which resource reads and prompt gets share (one budget,
 * options parsed once). Without options the policy is a no-op. A resumed approved call was counted when it
 * was requested and is not counted again.
 * While the store does not answer, `store.onUnavailable` decides: fail-open admits the call uncounted,
 * fail-closed (the default) answers RATE_LIMITED with a one-second Retry-After.
 */
export function rateLimitPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  if (options === undefined) return undefined;
  const limit = windowLimitOf(options, deps.onStoreUnavailable);

  const wrap: PolicyLayer['wrap'] = (next, answer) => (call, ctx) => {
    if (ctx.approval || !limit.counts(call.name)) return next(call, ctx);
    return decideWindow(limit, deps.store, ctx.principal, call.name, (decision) => {
      if (decision.allowed) return next(call, ctx);
      if (!decision.unavailable) deps.metrics?.rateLimited(ctx.principal.tenant);
      return answer(callFailure(call, 'RATE_LIMITED', decision.message, { retryAfterMs: decision.retryAfterMs }));
    });
  };
  return { appliesTo: (tool) => limit.counts(tool.name), wrap };
}
