import type { Tool, ToolCall, ToolResult } from '../types.js';
import type { Policy, PolicyContext } from './types.js';

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

/** A synchronous check: a ToolResult to answer the call with, or undefined to hand it on unchanged. */
export type GateCheck = (call: ToolCall, ctx: PolicyContext) => ToolResult | undefined;

const gateChecks = new WeakMap<Policy, GateCheck>();

/**
 * Declares that a policy is a plain synchronous gate (answer or hand on, nothing around the call). A
 * chain runs a gate inline, without the async layer, the promise and the per-call closure of a
 * wrapping policy. `policy` must behave exactly like `check` (it serves chains that call it directly).
 */
export function gatePolicy(check: GateCheck): Policy {
  const policy: Policy = async (call, ctx, next) => check(call, ctx) ?? next(call, ctx);
  gateChecks.set(policy, check);
  return policy;
}

/** The synchronous check of a gate policy, if it is one. */
export function gateCheckOf(policy: Policy): GateCheck | undefined {
  return gateChecks.get(policy);
}
