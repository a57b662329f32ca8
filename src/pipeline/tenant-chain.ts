import type { TenantConfig } from '../config/types.js';
import { invokeTool } from '../execution/invoke.js';
import { createPolicyChain } from './chain.js';
import type { PolicyDeps } from './deps.js';
import type { Next } from './types.js';

/** The policy chain of one tenant (CONTRACT §7, src/pipeline/order.ts) around the terminal executor. */
export async function buildTenantChain(tenant: TenantConfig, deps: PolicyDeps, baseDir: string): Promise<Next> {
  const chain = await createPolicyChain({ tenantPolicies: tenant.policies, tenantBindings: tenant.bindings, deps, baseDir });
  return (call, ctx) => chain(call, ctx, invokeTool);
}
