import type { Tool } from '../types.js';
import type { Policy } from './types.js';

// Kept beside the policy function rather than on the Policy type, so custom policies stay plain functions.
const inertTests = new WeakMap<Policy, (tool: Tool) => boolean>();

/**
 * Declares for which tools a policy only hands the call on (retry for a tool that is not safe to repeat,
 * a breaker for a tool without a service…). A chain composed for such a tool leaves the layer out and
 * just counts its `pass`, so an idle policy costs the call no async layer. `isInert` sees the tool the
 * call resolved to; the built-in policies before it never change `call.tool` or `call.name`.
 */
export function inertFor(policy: Policy, isInert: (tool: Tool) => boolean): Policy {
  inertTests.set(policy, isInert);
  return policy;
}

/** The inertness test a policy was marked with, if any. */
export function inertTestOf(policy: Policy): ((tool: Tool) => boolean) | undefined {
  return inertTests.get(policy);
}
