import picomatch from 'picomatch';
import type { PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { inertFor } from '../src/pipeline/fast-path.js';
import { passThrough, type Policy } from '../src/pipeline/types.js';
import { callFailure } from '../src/execution/tool-result.js';

const DIMENSIONS = ['tenant', 'user', 'tool'] as const;
type Dimension = (typeof DIMENSIONS)[number];

export const rateLimitOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['limit'],
  properties: {
    limit: { type: 'integer', minimum: 1 },
    windowMs: { type: 'integer', minimum: 1, default: 60_000 },
    // One dimension or several: ['user', 'tool'] counts each (user, tool) pair on its own.
    per: {
      anyOf: [
        { type: 'string', enum: DIMENSIONS },
        { type: 'array', items: { type: 'string', enum: DIMENSIONS }, minItems: 1, uniqueItems: true },
      ],
      default: 'user',
    },
    /** Globs of the tools this limit counts (default all). */
    tools: { type: 'array', items: { type: 'string', minLength: 1 }, default: ['*'] },
  },
};

interface RateLimitOptions {
  limit: number;
  windowMs: number;
  per: Dimension | Dimension[];
  tools: string[];
}

/**
 * Sliding-window limit in the shared store (one atomic `hitWindow`, so N replicas count together).
 * The key always includes the tenant: one tenant can never spend another's budget. Without options the
 * policy is a no-op. A resumed approved call was counted when it was requested and is not counted again.
 */
export function rateLimitPolicy(options: unknown, deps: PolicyDeps): Policy {
  if (options === undefined) return passThrough;
  const { limit, windowMs, per, tools } = parsePolicyOptions<RateLimitOptions>('rate-limit', rateLimitOptionsSchema, options);
  const dimensions = new Set<Dimension>(Array.isArray(per) ? per : [per]);
  const counts = picomatch(tools, { dot: true });
  return inertFor(async (call, ctx, next) => {
    if (ctx.approval || !counts(call.name)) return next(call, ctx);
    const parts = [`t=${encodeURIComponent(ctx.principal.tenant)}`];
    if (dimensions.has('user')) parts.push(`u=${encodeURIComponent(ctx.principal.user)}`);
    if (dimensions.has('tool')) parts.push(`n=${encodeURIComponent(call.name)}`);
    const hit = await deps.store.hitWindow(`ratelimit:${windowMs}:${limit}:${parts.join('|')}`, limit, windowMs);
    if (!hit.allowed) {
      return callFailure(call, 'RATE_LIMITED', `rate limit of ${limit} calls per ${windowMs} ms exceeded`, { retryAfterMs: hit.retryAfterMs });
    }
    return next(call, ctx);
  }, (tool) => !counts(tool.name));
}
