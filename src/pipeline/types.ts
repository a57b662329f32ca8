import type { CedarEngine } from '../cedar/engine.js';
import type { CircuitRegistry } from './circuit-state.js';
import type { BindingRules } from '../bindings/rules.js';
import type { ApprovalService } from '../approvals/types.js';
import type { AuditSink } from '../audit/types.js';
import type { OnStoreUnavailable } from '../config/types.js';
import type { StateStore } from '../store/types.js';
import type { GuardrailMetrics } from '../guardrails/metrics.js';
import type { Logger, Next, PolicyContext, Tool, ToolCall, ToolResult } from '../call/types.js';
import type { Clock } from './clock.js';
import type { PolicyMetrics } from './policy-metrics.js';
import type { BuiltinPolicyName } from './order.js';

// The call context's types are the call contract's (src/call/types.ts): the call path and the registry
// read them without depending on the chain.
export type { AccessDecision, Next, PolicyContext, ToolMode } from '../call/types.js';

/** A custom policy as a module's factory returns it (the operators' API, see docs/governance.md#governance-the-policy-chain). */
export type Policy = (call: ToolCall, ctx: PolicyContext, next: Next) => Promise<ToolResult>;

/** Counts a call a policy answered itself (did not hand on) in the decision metric, and returns it. */
export type Answer = (result: ToolResult) => ToolResult;

/**
 * One layer of the chain, as every policy is composed (docs/architecture.md, "The policy chain"). The
 * chain calls `wrap` once per tenant, tool and config snapshot, never per call. The function it returns
 * either hands the call on with `next` (the chain counts that as `pass`) or answers with
 * `answer(result)` (counted under the result's status or errorType). Its name is the key it was
 * configured under, kept by the chain beside it.
 */
export interface PolicyLayer {
  /**
   * Whether the policy has anything to do for calls to `tool`; for a tool it does not apply to, the chain
   * leaves the layer out and only counts its `pass`. Absent: it applies to every tool. Only consulted for
   * calls whose name is the tool's own, in chains without custom policies (those may hand on another call).
   */
  appliesTo?(tool: Tool): boolean;
  wrap(next: Next, answer: Answer): Next;
}

/** What the built-in policies need from the server; created once per process and shared by every tenant's chain. */
export interface PolicyDeps {
  store: StateStore;
  approvals: ApprovalService;
  audit: AuditSink;
  metrics?: PolicyMetrics;
  /** Shared across tenants so a failing upstream opens one breaker; each chain makes its own when absent. */
  circuits?: CircuitRegistry;
  clock?: Clock;
  /** Rate limits while the store does not answer (store.onUnavailable); default fail-closed. */
  onStoreUnavailable?: OnStoreUnavailable;
  /**
   * The tenant's binding rules, compiled once with its view (src/bindings/rules.ts); the chain hands them to
   * bind-arguments. Absent: the policy compiles its own from its options.
   */
  bindings?: BindingRules;
  /** The tenant's Cedar policies: set only in the deps the chain hands the cedar policy of a tenant that has them. */
  cedar?: CedarEngine;
  /** Guardrail findings by tenant, kind, action and side (policies/guardrails.ts). */
  guardrails?: GuardrailMetrics;
}

/**
 * Makes a built-in policy from its tenant options (validated here, failing with the key named). Returns
 * undefined when the options leave it nothing to do (no rate limit configured, no tool needing approval):
 * the chain then leaves it out entirely and counts no decision for it.
 */
export type BuiltinPolicyFactory = (options: unknown, deps: PolicyDeps) => PolicyLayer | undefined;

/** The built-in policies by name (policies/index.ts), handed to the chain by the composition root. */
export type BuiltinPolicies = Readonly<Record<BuiltinPolicyName, BuiltinPolicyFactory>>;

export type { Logger };
