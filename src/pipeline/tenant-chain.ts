import type { TenantConfig } from '../config/types.js';
import { invokeTool } from '../execution/invoke.js';
import { createPolicyChain, type PolicyChain } from './chain.js';
import type { PolicyMetrics } from './metrics.js';
import type { BuiltinPolicies, Next, PolicyDeps } from './types.js';

/** The policy chain of one tenant (docs/architecture.md, src/pipeline/order.ts) around the terminal executor. */
export function buildTenantChain(tenant: TenantConfig, builtins: BuiltinPolicies, deps: PolicyDeps, baseDir: string): Promise<PolicyChain> {
  const terminal = deps.metrics ? timedInvoke(deps.metrics) : invokeTool;
  return createPolicyChain({ builtins, tenantPolicies: withBudgets(tenant), tenantBindings: tenant.bindings, deps, baseDir, terminal });
}

/** The budget policy's options come from `tenants.<t>.budgets` (docs/governance.md#budgets); `policies.budget: false` switches it off. */
function withBudgets(tenant: TenantConfig): Record<string, unknown> {
  if (tenant.budgets.length === 0 || tenant.policies.budget === false) return tenant.policies;
  return { ...tenant.policies, budget: { budgets: tenant.budgets, toolCosts: tenant.toolCosts, toolsets: tenant.toolsets } };
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
