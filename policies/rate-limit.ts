import { callFailure } from '../src/call/tool-result.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyContext, PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { createWindowLimit, RateLimitOptions, STORE_DOWN_MESSAGE } from '../src/rate-limit/window-limit.js';
import type { WindowHit } from '../src/store/types.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../src/store/unavailable.js';
import type { ToolCall, ToolResult } from '../src/call/types.js';

export { RateLimitOptions };

/**
 * Sliding-window limit in the shared store (one atomic `hitWindow`, so N replicas count together).
 * The key always includes the tenant: one tenant can never spend another's budget (src/rate-limit/window-limit.ts,
 * which resource reads and prompt gets share). Without options the policy is a no-op. A resumed approved
 * call was counted when it was requested and is not counted again.
 * While the store does not answer, `store.onUnavailable` decides: fail-open admits the call uncounted,
 * fail-closed (the default) answers RATE_LIMITED with a one-second Retry-After.
 */
export function rateLimitPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  if (options === undefined) return undefined;
  const limit = createWindowLimit(parsePolicyOptions('rate-limit', RateLimitOptions, options), deps.onStoreUnavailable);

  const wrap: PolicyLayer['wrap'] = (next, answer) => {
    const decide = (hit: WindowHit, call: ToolCall, ctx: PolicyContext): Promise<ToolResult> => {
      if (hit.allowed) return next(call, ctx);
      deps.metrics?.rateLimited(ctx.principal.tenant);
      return Promise.resolve(answer(callFailure(call, 'RATE_LIMITED', limit.exceeded, { retryAfterMs: hit.retryAfterMs })));
    };
    const uncounted = (error: unknown, call: ToolCall, ctx: PolicyContext): Promise<ToolResult> => {
      if (!isStoreUnavailable(error)) return Promise.reject(error);
      if (limit.failOpen) return next(call, ctx);
      return Promise.resolve(answer(callFailure(call, 'RATE_LIMITED', STORE_DOWN_MESSAGE, { retryAfterMs: STORE_RETRY_AFTER_MS })));
    };
    // Not hitWindowLimit: the hot path keeps one promise hop per call.
    return (call, ctx) => {
      if (ctx.approval || !limit.counts(call.name)) return next(call, ctx);
      let key: string;
      try {
        key = limit.key(ctx.principal, call.name); // encodeURIComponent throws on a lone surrogate
      } catch (error) {
        return Promise.reject(error);
      }
      return deps.store.hitWindow(key, limit.limit, limit.windowMs).then(
        (hit) => decide(hit, call, ctx),
        (error: unknown) => uncounted(error, call, ctx),
      );
    };
  };
  return { appliesTo: (tool) => limit.counts(tool.name), wrap };
}
