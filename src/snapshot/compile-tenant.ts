import type { CedarEngine } from '../cedar/engine.js';
import { inConfigPath } from '../config/error-location.js';
import type { GatewayConfig, TenantConfig } from '../config/types.js';
import { buildTenantChain } from '../pipeline/tenant-chain.js';
import type { BuiltinPolicies, PolicyDeps } from '../pipeline/types.js';
import { createTenantView } from '../registry/tenant-view.js';
import type { TenantParts } from './tenant-table.js';

/** What of the config a tenant's compile reads besides the tenant. */
export type CompileConfig = Pick<GatewayConfig, 'baseDir' | 'guardrails'>;

/**
 * One tenant's view and policy chain from its config and its Cedar engine (loaded by the caller): the part of a
 * compile the start's check also runs in its child process (src/snapshot/check-child.ts), where no catalog is at hand.
 */
export async function compileTenantParts(id: string, tenant: TenantConfig, config: CompileConfig, deps: { builtinPolicies: BuiltinPolicies; policyDeps: PolicyDeps }, cedar: CedarEngine | undefined): Promise<TenantParts> {
  const view = createTenantView(id, tenant, cedar);
  const chain = await buildTenantChain(tenant, deps.builtinPolicies, deps.policyDeps, config.baseDir, { bindings: view.bindings, cedar, guardrailsDefault: config.guardrails }).catch((error: unknown) => {
    throw inConfigPath(error, `/tenants/${id}`);
  });
  return { view, chain };
}
