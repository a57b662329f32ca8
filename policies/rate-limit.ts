import picomatch from 'picomatch';
import Type, { type Static } from 'typebox';
import { callFailure } from '../src/execution/tool-result.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyContext, PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import type { WindowHit } from '../src/store/types.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../src/store/unavailable.js';
import type { Principal, ToolCall, ToolResult } from '../src/types.js';

const Dimension = Type.Enum(['tenant', 'user', 'tool'] as const, { type: 'string' });
type Dimension = Static<typeof Dimension>;

export const RateLimitOptions = Type.Object(
  {
    limit: Type.Integer({ minimum: 1 }),
    windowMs: Type.Integer({ minimum: 1, default: 60_000 }),
    // One dimension or several: ['user', 'tool'] counts each (user, tool) pair on its own.
    per: Type.Union([Dimension, Type.Array(Dimension, { minItems: 1, uniqueItems: true })], { default: 'user' }),
    /** Globs of the tools this limit counts (default all). */
    tools: Type.Array(Type.String({ minLength: 1 }), { default: ['*'] }),
  },
  { additionalProperties: false },
);

/**
 * Sliding-window limit in the shared store (one atomic `hitWindow`, so N replicas count together).
 * The key always includes the tenant: one tenant can never spend another's budget. Without options the
 * policy is a no-op. A resumed approved call was counted when it was requested and is not counted again.
 * While the store does not answer, `store.onUnavailable` decides: fail-open admits the call uncounted,
 * fail-closed (the default) answers RATE_LIMITED with a one-second Retry-After.
 */
export function rateLimitPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  if (options === undefined) return undefined;
  const { limit, windowMs, per, tools } = parsePolicyOptions('rate-limit', RateLimitOptions, options);
  const dimensions = new Set<Dimension>(Array.isArray(per) ? per : [per]);
  const counts = picomatch(tools, { dot: true });
  // The principal's part of the key, once per principal object (token-cache principals serve many calls).
  const principalParts = new WeakMap<Principal, string>();
  const keyOf = (principal: Principal, tool: string): string => {
    let key = principalParts.get(principal);
    if (key === undefined) {
      const parts = [`t=${encodeURIComponent(principal.tenant)}`];
      if (dimensions.has('user')) parts.push(`u=${encodeURIComponent(principal.user)}`);
      principalParts.set(principal, (key = `ratelimit:${windowMs}:${limit}:${parts.join('|')}`));
    }
    return dimensions.has('tool') ? `${key}|n=${encodeURIComponent(tool)}` : key;
  };
  // The store cannot count (it did not answer in time): store.onUnavailable decides, the same on every replica.
  const failOpen = deps.onStoreUnavailable === 'fail-open';

  const wrap: PolicyLayer['wrap'] = (next, answer) => {
    const decide = (hit: WindowHit, call: ToolCall, ctx: PolicyContext): Promise<ToolResult> => {
      if (hit.allowed) return next(call, ctx);
      deps.metrics?.rateLimited(ctx.principal.tenant);
      return Promise.resolve(answer(callFailure(call, 'RATE_LIMITED', `rate limit of ${limit} calls per ${windowMs} ms exceeded`, { retryAfterMs: hit.retryAfterMs })));
    };
    const uncounted = (error: unknown, call: ToolCall, ctx: PolicyContext): Promise<ToolResult> => {
      if (!isStoreUnavailable(error)) return Promise.reject(error);
      if (failOpen) return next(call, ctx);
      return Promise.resolve(
        answer(
          callFailure(call, 'RATE_LIMITED', 'the rate limit cannot be checked while the state store is unavailable (store.onUnavailable: fail-closed); retry later', {
            retryAfterMs: STORE_RETRY_AFTER_MS,
          }),
        ),
      );
    };
    return (call, ctx) => {
      if (ctx.approval || !counts(call.name)) return next(call, ctx);
      let key: string;
      try {
        key = keyOf(ctx.principal, call.name); // encodeURIComponent throws on a lone surrogate
      } catch (error) {
        return Promise.reject(error);
      }
      return deps.store.hitWindow(key, limit, windowMs).then(
        (hit) => decide(hit, call, ctx),
        (error: unknown) => uncounted(error, call, ctx),
      );
    };
  };
  return { appliesTo: (tool) => counts(tool.name), wrap };
}
