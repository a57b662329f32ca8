import type { TenantConfig } from '../config/types.js';
import { invokeTool } from '../execution/invoke.js';
import { createPolicyChain } from './chain.js';
import type { PolicyDeps } from './deps.js';
import type { PolicyMetrics } from './metrics.js';
import type { Next } from './types.js';

/** The policy chain of one tenant (CONTRACT §7, src/pipeline/order.ts) around the terminal executor. */
export async function buildTenantChain(tenant: TenantConfig, deps: PolicyDeps, baseDir: string): Promise<Next> {
  const chain = await createPolicyChain({ tenantPolicies: tenant.policies, tenantBindings: tenant.bindings, deps, baseDir });
  const terminal = deps.metrics ? timedInvoke(deps.metrics) : invokeTool;
  return (call, ctx) => chain(call, ctx, terminal);
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
