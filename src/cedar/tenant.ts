// A tenant's Cedar engine as the snapshot compiles it: errors located under the tenant's `cedar` key, and
// each decision counted by tenant (the capped label), action and outcome.
import { inConfigPath } from '../config/error-location.js';
import type { CedarConfig } from '../config/types.js';
import type { Tool } from '../call/types.js';
import type { CedarEngine, CedarEngineParts } from './engine.js';
import { loadCedarEngine } from './load.js';

export async function loadTenantCedar(id: string, config: CedarConfig, tools: readonly Tool[], baseDir: string, onDecision: CedarEngineParts['onDecision']): Promise<CedarEngine> {
  return loadCedarEngine({ tenant: id, config, tools, baseDir, onDecision }).catch((error: unknown) => {
    throw inConfigPath(error, `/tenants/${id}/cedar`);
  });
}
