import type { CedarEngine } from '../cedar/engine.js';
import type { BindingRules } from '../bindings/rules.js';
import type { TenantConfig } from '../config/types.js';
import { invokeTool } from '../call/invoke.js';
import { createPolicyChain, type PolicyChain } from './chain.js';
import type { PolicyMetrics } from './policy-metrics.js';
import type { BuiltinPolicies, Next, PolicyDeps } from './types.js';

/** The policy chain of one tenant (docs/architecture.md, src/pipeline/order.ts) around the terminal executor. */
export function buildTenantChain(tenant: TenantConfig, builtins: BuiltinPolicies, deps: PolicyDeps, baseDir: string, bindings?: BindingRules, cedar?: CedarEngine): Promise<PolicyChain> {
  const terminal = deps.metrics ? timedInvoke(deps.metrics) : invokeTool;
  return createPolicyChain({ builtins, tenantPolicies: tenant.policies, tenantBindings: tenant.bindings, bindingRules: bindings, deps, baseDir, terminal, cedar });
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
