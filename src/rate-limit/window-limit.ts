// A tenant's sliding-window rate limit (its `policies.rate-limit` options): the key a call counts under and
// the answers it gets. The rate-limit policy (policies/rate-limit.ts) applies it to tool calls, the
// resource and prompt catalog (src/catalog/resource-catalog-governance.ts) to resource reads and prompt gets, so
// both spend one budget.
import Type, { type Static } from 'typebox';
import type { OnStoreUnavailable } from '../config/types.js';
import { compileOptionGlobs } from '../patterns/name-globs.js';
import { parsePolicyOptions } from '../pipeline/options.js';
import type { StateStore, WindowHit } from '../store/types.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../store/unavailable.js';
import type { Principal } from '../call/principal.js';

const Dimension = Type.Enum(['tenant', 'user', 'tool'] as const, { type: 'string' });
type Dimension = Static<typeof Dimension>;

export const RateLimitOptions = Type.Object(
  {
    limit: Type.Integer({ minimum: 1 }),
    windowMs: Type.Integer({ minimum: 1, default: 60_000 }),
    // One dimension or several: ['user', 'tool'] counts each (user, tool) pair on its own.
    per: Type.Union([Dimension, Type.Array(Dimension, { minItems: 1, uniqueItems: true })], { default: 'user' }),
    /** Globs of the tools this limit counts (default all, `resources.read` and `prompts.get` included). */
    tools: Type.Array(Type.String({ minLength: 1 }), { default: ['*'] }),
  },
  { additionalProperties: false },
);
export type RateLimitOptions = Static<typeof RateLimitOptions>;

/**
 * The names resource reads and prompt gets count under. Tool names match `^[A-Za-z0-9_-]{1,64}$`, so no
 * tool can take them; `*` matches them, so the default limit counts them and a narrower `tools` list
 * leaves them out unless it names them.
 */
export const RESOURCE_READ_NAME = 'resources.read';
export const PROMPT_GET_NAME = 'prompts.get';

/** `unavailable`: refused because the store did not answer (fail-closed), not because the limit was reached. */
export type WindowDecision = { allowed: true } | { allowed: false; retryAfterMs: number; message: string; unavailable: boolean };

export interface WindowLimit {
  /** Whether calls of this name count against the limit. */
  counts(name: string): boolean;
  /** The store key a call of `name` by `principal` counts under; throws on a lone surrogate (encodeURIComponent). */
  key(principal: Principal, name: string): string;
  /** The refusal of a call over the limit. */
  readonly exceeded: string;
  /** True when the store's outage admits calls uncounted (store.onUnavailable: fail-open). */
  readonly failOpen: boolean;
  readonly limit: number;
  readonly windowMs: number;
}

export const STORE_DOWN_MESSAGE = 'the rate limit cannot be checked while the state store is unavailable (store.onUnavailable: fail-closed); retry later';

/**
 * The key always includes the tenant: one tenant can never spend another's budget. It holds the limit and
 * window too, so a changed limit starts a fresh count.
 */
export function createWindowLimit(options: RateLimitOptions, onStoreUnavailable: OnStoreUnavailable | undefined): WindowLimit {
  const { limit, windowMs, per, tools } = options;
  const dimensions = new Set<Dimension>(Array.isArray(per) ? per : [per]);
  const counts = compileOptionGlobs('policies.rate-limit.tools', tools);
  // The principal's part of the key, once per principal object (token-cache principals serve many calls).
  const principalParts = new WeakMap<Principal, string>();
  return {
    counts,
    key(principal, name) {
      let key = principalParts.get(principal);
      if (key === undefined) {
        const parts = [`t=${encodeURIComponent(principal.tenant)}`];
        if (dimensions.has('user')) parts.push(`u=${encodeURIComponent(principal.user)}`);
        principalParts.set(principal, (key = `ratelimit:${windowMs}:${limit}:${parts.join('|')}`));
      }
      return dimensions.has('tool') ? `${key}|n=${encodeURIComponent(name)}` : key;
    },
    exceeded: `rate limit of ${limit} calls per ${windowMs} ms exceeded`,
    failOpen: onStoreUnavailable === 'fail-open',
    limit,
    windowMs,
  };
}

const ALLOWED: WindowDecision = { allowed: true };

/** The decision on the store's count of one call: the one place a hit becomes an answer. */
export function decideHit(limit: WindowLimit, hit: WindowHit): WindowDecision {
  return hit.allowed ? ALLOWED : { allowed: false, retryAfterMs: hit.retryAfterMs, message: limit.exceeded, unavailable: false };
}

/** The decision when the store could not count the call (store.onUnavailable); any other error is thrown on. */
export function decideOutage(limit: WindowLimit, error: unknown): WindowDecision {
  if (!isStoreUnavailable(error)) throw error;
  return limit.failOpen ? ALLOWED : { allowed: false, retryAfterMs: STORE_RETRY_AFTER_MS, message: STORE_DOWN_MESSAGE, unavailable: true };
}

/**
 * Counts one call of `name` (when the limit counts it), decides it and hands the decision to `then`; other
 * store errors reject. One promise hop, as the hot path needs: the rate-limit policy runs the rest of the
 * chain from `then`.
 */
export function decideWindow<R>(limit: WindowLimit, store: StateStore, principal: Principal, name: string, then: (decision: WindowDecision) => R | PromiseLike<R>): Promise<R> {
  if (!limit.counts(name)) return Promise.resolve(ALLOWED).then(then);
  let key: string;
  try {
    key = limit.key(principal, name); // encodeURIComponent throws on a lone surrogate
  } catch (error) {
    return Promise.reject(error);
  }
  return store.hitWindow(key, limit.limit, limit.windowMs).then(
    (hit) => then(decideHit(limit, hit)),
    (error: unknown) => then(decideOutage(limit, error)),
  );
}

/** Counts one call of `name` (when the limit counts it) and decides it; other store errors reject. */
export function hitWindowLimit(limit: WindowLimit, store: StateStore, principal: Principal, name: string): Promise<WindowDecision> {
  return decideWindow(limit, store, principal, name, (decision) => decision);
}

/** One WindowLimit per options object and store setting: the policy and the catalog parse a tenant's options once. */
const parsed = new WeakMap<object, { onStoreUnavailable: OnStoreUnavailable | undefined; limit: WindowLimit }>();

/**
 * The tenant's `policies.rate-limit` options (as configured, not yet validated) as a WindowLimit, parsed and
 * validated once per options object (a reload makes new ones); throws TG_CONFIG_INVALID naming a bad key.
 */
export function windowLimitOf(options: unknown, onStoreUnavailable: OnStoreUnavailable | undefined): WindowLimit {
  const cacheable = options !== null && typeof options === 'object';
  const known = cacheable ? parsed.get(options) : undefined;
  if (known && known.onStoreUnavailable === onStoreUnavailable) return known.limit;
  const limit = createWindowLimit(parsePolicyOptions('rate-limit', RateLimitOptions, options), onStoreUnavailable);
  if (cacheable) parsed.set(options, { onStoreUnavailable, limit });
  return limit;
}
