import { LRUCache } from 'lru-cache';
import { canonicalJson } from '../shared/canonical-json.js';
import type { BuiltinPolicyName } from './order.js';
import type { BuiltinPolicyFactory, PolicyDeps, PolicyLayer } from './types.js';

/**
 * Built-ins whose layer is a function of its options and the process's shared deps alone: everything of the
 * tenant they need (its id for keys, its principal, its access check) comes with each call's context. Left
 * out: cedar (a tenant's engine), budget (a meter per layer) and guardrails (compiled rules with a hash key);
 * bind-arguments only with the shared empty rules, circuit-breaker only with the shared circuit registry.
 */
const PURE: ReadonlySet<BuiltinPolicyName> = new Set(['audit', 'rate-limit', 'access', 'approval', 'max-depth', 'retry', 'timeout']);

/** A layer as made, `undefined` (nothing to do) included. */
interface Made {
  layer: PolicyLayer | undefined;
}

// Per shared deps (one per process; tests make their own). Bounded: options that differ per tenant (a limit of its
// own) are made per tenant and pass through; the ones tenants have in common stay.
const MAX_LAYERS = 1024;
const byDeps = new WeakMap<PolicyDeps, LRUCache<string, Made>>();

/**
 * The layer of built-in `name` for `options`: made once per distinct options and shared by every tenant's chain
 * that has them (ten30, bench/results.md: ~4 KiB per compiled tenant whose policies differ from another's in one
 * option), or made afresh when it holds something of the tenant. `layerDeps`: the deps this layer is made
 * with, `deps` with the tenant's binding rules or Cedar engine where it takes them.
 */
export function builtinLayer(name: BuiltinPolicyName, factory: BuiltinPolicyFactory, options: unknown, deps: PolicyDeps, layerDeps: PolicyDeps, sharedRules: boolean): PolicyLayer | undefined {
  if (!shareable(name, deps, layerDeps, sharedRules) || !isPlainJson(options, 0)) return factory(options, layerDeps);
  let made = byDeps.get(deps);
  if (!made) byDeps.set(deps, (made = new LRUCache<string, Made>({ max: MAX_LAYERS })));
  // Absent options are not `null` ones (which a factory refuses): the key tells them apart.
  // bind-arguments with the shared empty rules binds nothing whatever its options: kept apart from one without rules.
  const tag = layerDeps.bindings ? `${name}+` : name;
  const key = options === undefined ? tag : `${tag} ${canonicalJson(options)}`;
  let entry = made.get(key);
  if (!entry) {
    // A factory that refuses its options throws here, as unshared: nothing is kept for them.
    entry = { layer: factory(options, layerDeps) };
    made.set(key, entry);
  }
  return entry.layer;
}

/**
 * Options whose canonical JSON is their whole value (what YAML and JSON configs give): a value JSON cannot
 * write exactly (NaN, a Date, undefined in an array) would share a key with another, so such options are
 * never shared.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  if (depth > 32) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === undefined) return depth === 0;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.every((item) => item !== undefined && isPlainJson(item, depth + 1));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every((item) => item !== undefined && isPlainJson(item, depth + 1));
}

function shareable(name: BuiltinPolicyName, deps: PolicyDeps, layerDeps: PolicyDeps, sharedRules: boolean): boolean {
  if (name === 'bind-arguments') return sharedRules;
  if (name === 'circuit-breaker') return deps.circuits !== undefined && layerDeps === deps;
  return PURE.has(name) && layerDeps === deps;
}
