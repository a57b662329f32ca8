import pino from 'pino';
import { validateConfigObject } from '../../src/config/load.js';
import type { TenantConfig } from '../../src/config/types.js';
import { buildCatalog, type Catalog } from '../../src/registry/catalog.js';
import { defineTool } from '../../src/registry/define-tool.js';
import { createFeatureGate } from '../../src/registry/features.js';
import { createOverrideApplier } from '../../src/registry/overrides.js';
import { assemblePool, type Pool } from '../../src/registry/pool.js';
import { createTenantView } from '../../src/registry/tenant-view.js';
import type { Principal } from '../../src/call/principal.js';
import type { Tool, ToolSourceKind, ToolSpec } from '../../src/call/types.js';

export const silentLog = pino({ level: 'silent' });

export function tool(name: string, source: ToolSourceKind = 'function', extra: Partial<ToolSpec> = {}): Tool {
  return defineTool({ name, source, description: `${name} (${source})`, handler: () => `${source}:${name}`, ...extra });
}

/** A tenant config with every default filled, as the loader would produce it. */
export function tenantConfig(raw: Record<string, unknown> = {}): TenantConfig {
  // Declared (never connected) services, so the loader's reference check passes.
  const services = Array.isArray(raw.mcpServices) ? (raw.mcpServices as string[]) : [];
  const global = services.map((id) => ({ id, transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }));
  return validateConfigObject({ tenants: { t: raw }, mcp: { global } }, process.cwd(), undefined).tenants.t!;
}

export function catalogOf(tools: Tool[], options: { features?: Record<string, boolean>; env?: NodeJS.ProcessEnv; overrides?: Record<string, object> } = {}): Catalog {
  return buildCatalog([{ kind: 'function', tools: () => tools }], {
    applyOverrides: createOverrideApplier(options.overrides ?? {}),
    featureEnabled: createFeatureGate(options.features ?? {}, options.env ?? {}),
    registryTools: [],
    log: silentLog,
  });
}

export const principal = (overrides: Partial<Principal> = {}): Principal => ({ tenant: 't', user: 'alice', roles: [], claims: {}, ...overrides });

export function poolOf(catalog: Catalog, tenant: TenantConfig, options: { principal?: Principal; mode?: 'default' | 'readonly'; userTools?: Tool[]; onShadowed?: (name: string, winner: Tool, loser: Tool) => void } = {}): Pool {
  return assemblePool({
    catalog,
    tenant: createTenantView('t', tenant),
    principal: options.principal ?? principal(),
    mode: options.mode ?? 'default',
    userTools: options.userTools ?? [],
    onShadowed: options.onShadowed ?? (() => undefined),
  });
}
