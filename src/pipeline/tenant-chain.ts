import type { CedarEngine } from '../cedar/engine.js';
import type { BindingRules } from '../bindings/rules.js';
import type { TenantConfig } from '../config/types.js';
import { invokeTool } from '../call/invoke.js';
import { createPolicyChain, type PolicyChain } from './chain.js';
import type { PolicyMetrics } from './policy-metrics.js';
import type { BuiltinPolicies, Next, PolicyDeps } from './types.js';

/**
 * The policy chain of one tenant (docs/architecture.md, src/pipeline/order.ts) around the terminal executor.
 * `guardrailsDefault`: the gateway's `guardrails`, for a tenant that sets none (docs/governance.md#guardrails).
 */
export function buildTenantChain(
  tenant: TenantConfig,
  builtins: BuiltinPolicies,
  deps: PolicyDeps,
  baseDir: string,
  parts: { bindings?: BindingRules; cedar?: CedarEngine; guardrailsDefault?: TenantConfig['guardrails'] } = {},
): Promise<PolicyChain> {
  const terminal = deps.metrics ? timedInvoke(deps.metrics) : invokeTool;
  return createPolicyChain({
    builtins,
    tenantPolicies: withBudgets(tenant, withGuardrails(tenant, parts.guardrailsDefault)),
    tenantBindings: tenant.bindings,
    bindingRules: parts.bindings,
    deps,
    baseDir,
    terminal,
    cedar: parts.cedar,
  });
}

/** The tenant's `guardrails` key (or the gateway default) as the guardrails policy's options; `policies.guardrails: false` still switches it off. */
function withGuardrails(tenant: TenantConfig, guardrailsDefault: TenantConfig['guardrails']): Record<string, unknown> {
  const guardrails = tenant.guardrails ?? guardrailsDefault;
  if (guardrails === undefined || tenant.policies.guardrails === false) return tenant.policies;
  return { ...tenant.policies, guardrails };
}

/** The budget policy's options come from `tenants.<t>.budgets` (docs/governance.md#budgets); `policies.budget: false` switches it off. */
function withBudgets(tenant: TenantConfig, policies: Record<string, unknown>): Record<string, unknown> {
  if (tenant.budgets.length === 0 || tenant.policies.budget === false) return policies;
  return { ...policies, budget: { budgets: tenant.budgets, toolCosts: tenant.toolCosts, toolsets: tenant.toolsets, approval: tenant.policies.approval } };
}

/**
 * The terminal executor, timing each attempt at an upstream (tools with a `service`; retries are attempts
 * of their own). In-process tools are handed straight on: their time is the tool-call histogram's.
 */
export function timedInvoke(metrics: PolicyMetrics): Next {
  return (call, ctx) => {
    if (call.tool.service === undefined) return invokeTool(call, ctx);
    const started = performance.now();
    return invokeTool(call, ctx).then((result) => {
      metrics.upstreamCall(call.tool, result, (performance.now() - started) / 1000);
      return result;
    });
  };
}
