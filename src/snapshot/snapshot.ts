import { inConfigFile, inConfigPath } from '../config/error-location.js';
import type { GatewayConfig } from '../config/types.js';
import type { PolicyChain } from '../pipeline/chain.js';
import { buildTenantChain } from '../pipeline/tenant-chain.js';
import type { BuiltinPolicies, PolicyDeps } from '../pipeline/types.js';
import { buildCatalog, type Catalog } from '../registry/catalog.js';
import { createFeatureGate } from '../registry/features.js';
import { createOverrideApplier } from '../registry/overrides.js';
import type { ShadowReport } from '../registry/pool.js';
import type { ToolProvider } from '../registry/provider.js';
import { createTenantView, type TenantView } from '../registry/tenant-view.js';
import type { Logger, Tool } from '../types.js';
import { PoolCache } from './pool-cache.js';

/** A provider and the config it was built from: a reload reuses providers whose config did not change. */
export interface ProviderSpec {
  key: string;
  create: () => ToolProvider;
}

/**
 * Everything one config version decides (docs/architecture.md#config-snapshot-and-reload). Immutable: a
 * reload or a catalog change makes a new one; the pools derived from it are cached on it.
 */
export interface Snapshot {
  readonly config: GatewayConfig;
  readonly providers: ReadonlyMap<string, ToolProvider>;
  readonly catalog: Catalog;
  readonly tenants: ReadonlyMap<string, TenantView>;
  readonly chains: ReadonlyMap<string, PolicyChain>;
  readonly pools: PoolCache;
}

export interface SnapshotDeps {
  log: Logger;
  env: NodeJS.ProcessEnv;
  /** Builds the tool providers a config asks for (function, built-in, RAG, MCP…). */
  providerSpecs: (config: GatewayConfig) => ProviderSpec[];
  /** Store, approvals, audit sink and metrics shared by every tenant's policy chain. */
  policyDeps: PolicyDeps;
  /** The built-in policies each tenant's chain is made of (policies/index.ts). */
  builtinPolicies: BuiltinPolicies;
  /** The gateway's own tools in every catalog (`tool_search`). */
  registryTools: readonly Tool[];
  /** Told when a pool settles two same-named tools by precedence. */
  onShadowed: ShadowReport;
}

/**
 * A complete snapshot of `config`. Providers of `previous` with an unchanged config are carried over with
 * their connections; `onProviderChange` is subscribed on each provider started here. On a failure the
 * providers started here are closed and the error is thrown: the caller's snapshot keeps serving.
 */
export async function buildSnapshot(
  config: GatewayConfig,
  previous: ReadonlyMap<string, ToolProvider>,
  deps: SnapshotDeps,
  onProviderChange: (provider: ToolProvider) => void,
): Promise<Snapshot> {
  const providers = new Map<string, ToolProvider>();
  const started: ToolProvider[] = [];
  try {
    for (const spec of deps.providerSpecs(config)) {
      const reused = previous.get(spec.key);
      if (reused) {
        providers.set(spec.key, reused);
        continue;
      }
      const provider = spec.create();
      started.push(provider);
      await provider.start?.();
      provider.onChange?.(() => onProviderChange(provider));
      providers.set(spec.key, provider);
    }
    const tenants = new Map(Object.entries(config.tenants).map(([id, tenant]) => [id, createTenantView(id, tenant)]));
    const chains = new Map<string, PolicyChain>();
    for (const [id, tenant] of Object.entries(config.tenants)) {
      chains.set(id, await buildTenantChain(tenant, deps.builtinPolicies, deps.policyDeps, config.baseDir).catch((error: unknown) => {
        throw inConfigPath(error, `/tenants/${id}`);
      }));
    }
    const catalog = catalogFor(config, providers, deps);
    return { config, providers, catalog, tenants, chains, pools: new PoolCache(catalog, deps.onShadowed) };
  } catch (error) {
    await Promise.allSettled(started.map((provider) => provider.close?.()));
    throw inConfigFile(error, config.source);
  }
}

/** The same snapshot with its catalog rebuilt from its providers' tools now, and empty pool caches. */
export function withFreshCatalog(snapshot: Snapshot, deps: SnapshotDeps): Snapshot {
  const catalog = catalogFor(snapshot.config, snapshot.providers, deps);
  return { ...snapshot, catalog, pools: new PoolCache(catalog, deps.onShadowed) };
}

function catalogFor(config: GatewayConfig, providers: ReadonlyMap<string, ToolProvider>, deps: SnapshotDeps): Catalog {
  return buildCatalog([...providers.values()], {
    applyOverrides: createOverrideApplier(config.tools),
    featureEnabled: createFeatureGate(config.features, deps.env),
    registryTools: deps.registryTools,
    log: deps.log,
  });
}
