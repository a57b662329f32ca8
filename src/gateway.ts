import type { Agent } from 'undici';
import { codeModeCounter } from './code-mode/metrics.js';
import { codeModePool } from './code-mode/pool.js';
import { createCodeModeTools } from './code-mode/tools.js';
import type { GatewayConfig } from './config/types.js';
import { executeCall, type CallOptions, type CallRequest, type ExecutionScope } from './execution/execute.js';
import { createSchemaValidator } from './execution/schema-validator.js';
import type { GatewayMetrics } from './observability/metrics.js';
import { buildTenantChain } from './pipeline/tenant-chain.js';
import type { BuiltinPolicies, Next, PolicyDeps, ToolMode } from './pipeline/types.js';
import { buildCatalog, type Catalog } from './registry/catalog.js';
import { createFeatureGate } from './registry/features.js';
import { createOverrideApplier } from './registry/overrides.js';
import { assemblePool, callNeedsOwnTools, createShadowReporter, type Pool, type ShadowReport } from './registry/pool.js';
import type { McpService, ToolProvider, UpstreamStatus, UserToolProvider } from './registry/provider.js';
import { createTenantView, TOOL_SEARCH_NAME, type TenantView, type Toolset } from './registry/tenant-view.js';
import { createToolSearchTool } from './registry/tool-search.js';
import { narrowPool } from './registry/toolset-pool.js';
import { isStoreUnavailable } from './store/unavailable.js';
import type { Logger, Principal, Tool, ToolResult } from './types.js';
import { DomainError, errors } from './errors.js';

/** A provider and the config it was built from: a reload reuses providers whose config did not change. */
export interface ProviderSpec {
  key: string;
  create: () => ToolProvider;
}

export interface GatewayDeps {
  log: Logger;
  metrics: GatewayMetrics;
  agent: Agent;
  env: NodeJS.ProcessEnv;
  /** Builds the tool providers a config asks for (function, built-in, RAG, MCP…). */
  providerSpecs: (config: GatewayConfig) => ProviderSpec[];
  userProvider?: UserToolProvider;
  /** Store, approvals, audit sink and metrics shared by every tenant's policy chain. */
  policyDeps: PolicyDeps;
  /** The built-in policies each tenant's chain is made of (policies/index.ts). */
  builtinPolicies: BuiltinPolicies;
}

/** Everything one config version decides. Immutable: a reload or catalog change makes a new one. */
interface Snapshot {
  readonly config: GatewayConfig;
  readonly providers: ReadonlyMap<string, ToolProvider>;
  readonly catalog: Catalog;
  readonly tenants: ReadonlyMap<string, TenantView>;
  readonly chains: ReadonlyMap<string, Next>;
  readonly pools: PoolCache;
}

/**
 * Shared pools of principals without tools of their own: by tenant, mode and role set, and by the
 * principal object itself (token-cache principals serve many calls, so most calls skip building the key).
 */
interface PoolCache {
  readonly byKey: Map<string, Pool>;
  readonly byPrincipal: Readonly<Record<ToolMode, WeakMap<Principal, Pool>>>;
  /** The execution scope of each pool (a pool belongs to one tenant): one object per pool, not per call. */
  readonly scopes: WeakMap<Pool, ExecutionScope>;
  /** Toolset subsets of each pool, by toolset name. */
  readonly subsets: WeakMap<Pool, Map<string, Pool>>;
  /** The `tool_search` of each toolset (by tenant and name): it searches that subset only. */
  readonly toolSearches: Map<string, Tool>;
  /**
   * Pools of callers with tools of their own, by their own tools' list (the same array until one of their
   * servers changes, src/mcp/user/provider.ts) and then by tenant, mode and role set: built once per change,
   * not per request (docs/security-model.md#user-catalog-bounds).
   */
  readonly byUserTools: WeakMap<readonly Tool[], Map<string, Pool>>;
  /** The three tools of each code-mode toolset (by tenant and name). */
  readonly codeTools: Map<string, readonly Tool[]>;
}

/**
 * How a toolset is looked at: `listed` is what its endpoint serves (a code-mode toolset's three tools),
 * `scripted` the subset of tools itself, which a code-mode script calls. The same for any other toolset.
 */
export type ToolsetView = 'listed' | 'scripted';

const emptyPoolCache = (): PoolCache => ({
  byKey: new Map(),
  byPrincipal: { default: new WeakMap(), readonly: new WeakMap() },
  scopes: new WeakMap(),
  subsets: new WeakMap(),
  toolSearches: new Map(),
  byUserTools: new WeakMap(),
  codeTools: new Map(),
});

const MAX_CACHED_POOLS = 1000;

/** The principal's tenant is not (or no longer) configured; its message names the tenant, for logs only. */
export class UnknownTenantError extends DomainError {
  readonly gatewayCode = 'TG_UNKNOWN_TENANT';
  override readonly showsMessage = false;
}

// Principals come from the token cache, so one object serves many requests: its sorted role list is
// computed once, not copied, sorted and joined on every call.
const roleKeys = new WeakMap<Principal, string>();
function rolesKey(principal: Principal): string {
  let key = roleKeys.get(principal);
  if (key === undefined) roleKeys.set(principal, (key = [...principal.roles].sort().join(',')));
  return key;
}

export class Gateway {
  private snapshot!: Snapshot;
  private readonly validatorFor = createSchemaValidator();
  private readonly onShadowed: ShadowReport;
  private readonly toolSearch: Tool;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly changeListeners = new Set<() => void>();

  private constructor(private readonly deps: GatewayDeps) {
    this.onShadowed = createShadowReporter(deps.log, (winner, loser) => deps.metrics.toolShadowed.inc({ winner: winner.source, loser: loser.source }));
    this.toolSearch = createToolSearchTool((principal, mode) => this.poolFor(principal, mode));
  }

  static async create(config: GatewayConfig, deps: GatewayDeps): Promise<Gateway> {
    const gateway = new Gateway(deps);
    gateway.snapshot = await gateway.buildSnapshot(config, new Map());
    return gateway;
  }

  get config(): GatewayConfig {
    return this.snapshot.config;
  }

  tenant(id: string): TenantView | undefined {
    return this.snapshot.tenants.get(id);
  }

  private async buildSnapshot(config: GatewayConfig, previous: ReadonlyMap<string, ToolProvider>): Promise<Snapshot> {
    const providers = new Map<string, ToolProvider>();
    const started: ToolProvider[] = [];
    try {
      for (const spec of this.deps.providerSpecs(config)) {
        const reused = previous.get(spec.key);
        if (reused) {
          providers.set(spec.key, reused);
          continue;
        }
        const provider = spec.create();
        started.push(provider);
        await provider.start?.();
        provider.onChange?.(() => this.refreshCatalog(provider));
        providers.set(spec.key, provider);
      }
      const tenants = new Map(Object.entries(config.tenants).map(([id, tenant]) => [id, createTenantView(id, tenant)]));
      const chains = new Map<string, Next>();
      for (const [id, tenant] of Object.entries(config.tenants)) chains.set(id, await buildTenantChain(tenant, this.deps.builtinPolicies, this.deps.policyDeps, config.baseDir));
      return { config, providers, catalog: this.catalogFor(config, providers), tenants, chains, pools: emptyPoolCache() };
    } catch (error) {
      await Promise.allSettled(started.map((provider) => provider.close?.()));
      throw error;
    }
  }

  private catalogFor(config: GatewayConfig, providers: ReadonlyMap<string, ToolProvider>): Catalog {
    return buildCatalog([...providers.values()], {
      applyOverrides: createOverrideApplier(config.tools),
      featureEnabled: createFeatureGate(config.features, this.deps.env),
      registryTools: [this.toolSearch],
      log: this.deps.log,
    });
  }

  /** A provider's tools changed (MCP list_changed, reconnect): rebuild the catalog of the live snapshot. */
  private refreshCatalog(provider: ToolProvider): void {
    // A provider of a snapshot still being built (the first one, or a reload's) changed while a later
    // provider was starting: that snapshot's catalog is made after every start, so it sees the change.
    const current: Snapshot | undefined = this.snapshot;
    if (!current || ![...current.providers.values()].includes(provider)) return;
    this.snapshot = { ...current, catalog: this.catalogFor(current.config, current.providers), pools: emptyPoolCache() };
    this.changed();
  }

  /**
   * Told after every swap of the live snapshot (reload, an upstream's tool list changing, a pinned
   * definition released): any principal's pool may differ now. Returns the unsubscribe.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.changeListeners) {
      try {
        listener();
      } catch (error) {
        this.deps.log.error({ err: error }, 'snapshot change listener failed');
      }
    }
  }

  /**
   * Validated config in, atomic swap out. A failure leaves the old snapshot serving. In-flight calls
   * keep the snapshot they started with; providers no longer used are closed after the swap.
   */
  async reload(next: GatewayConfig): Promise<{ changed: boolean }> {
    const run = this.reloading.then(async () => {
      const previous = this.snapshot;
      let snapshot: Snapshot;
      try {
        snapshot = await this.buildSnapshot(next, previous.providers);
      } catch (error) {
        this.deps.metrics.reloaded(false);
        throw error;
      }
      this.snapshot = snapshot;
      this.deps.metrics.reloaded(true);
      this.changed();
      const kept = new Set(snapshot.providers.values());
      const retired = [...previous.providers.values()].filter((provider) => !kept.has(provider));
      await Promise.allSettled(retired.map((provider) => provider.close?.()));
      return { changed: JSON.stringify(previous.config) !== JSON.stringify(next) };
    });
    this.reloading = run.catch(() => undefined);
    return run;
  }

  /** The principal's pool on the live snapshot, or its subset in one of the tenant's toolsets (404 for an unknown one). */
  async poolFor(principal: Principal, requestedMode: ToolMode, toolset?: string, view: ToolsetView = 'listed'): Promise<Pool> {
    const snapshot = this.snapshot;
    const { pool } = await this.poolIn(snapshot, principal, requestedMode, true);
    return toolset === undefined ? pool : this.subsetOf(snapshot, pool, principal.tenant, toolset, view);
  }

  /** Throws TG_NOT_FOUND unless the principal's tenant has this toolset in the live config. */
  assertToolset(principal: Principal, toolset: string): void {
    if (!this.snapshot.tenants.get(principal.tenant)?.toolset(toolset)) throw new errors.TG_NOT_FOUND(`unknown toolset: ${toolset}`);
  }

  private subsetOf(snapshot: Snapshot, pool: Pool, tenantId: string, name: string, view: ToolsetView): Pool {
    const toolset = snapshot.tenants.get(tenantId)?.toolset(name);
    // Another tenant's toolset is unknown here, exactly as a name nobody configured.
    if (!toolset) throw new errors.TG_NOT_FOUND(`unknown toolset: ${name}`);
    let subsets = snapshot.pools.subsets.get(pool);
    if (!subsets) snapshot.pools.subsets.set(pool, (subsets = new Map()));
    let subset = subsets.get(name);
    if (!subset) subsets.set(name, (subset = narrowPool(pool, toolset, this.toolSearchOf(snapshot, tenantId, name))));
    if (toolset.mode !== 'code' || view === 'scripted') return subset;
    const codeKey = `${name}\u0000code`;
    let code = subsets.get(codeKey);
    if (!code) subsets.set(codeKey, (code = codeModePool(subset, this.codeToolsOf(snapshot, tenantId, toolset))));
    return code;
  }

  /** The code-mode tools of a toolset: their scripts call the toolset's subset through the one execution path. */
  private codeToolsOf(snapshot: Snapshot, tenantId: string, toolset: Toolset): readonly Tool[] {
    const key = `${tenantId}\u0000${toolset.name}`;
    let tools = snapshot.pools.codeTools.get(key);
    if (!tools) {
      const counter = codeModeCounter(this.deps.metrics.registry);
      tools = createCodeModeTools(
        {
          poolFor: (principal, mode) => this.poolFor(principal, mode, toolset.name, 'scripted'),
          execute: (request, options) => this.execute(request, options, toolset.name, 'scripted'),
          count: (kind, outcome) => counter.inc({ kind, source: 'code', outcome }),
        },
        toolset.sandbox,
      );
      snapshot.pools.codeTools.set(key, tools);
    }
    return tools;
  }

  private toolSearchOf(snapshot: Snapshot, tenantId: string, toolset: string): Tool {
    const key = `${tenantId}\u0000${toolset}`;
    let tool = snapshot.pools.toolSearches.get(key);
    if (!tool) {
      const shared = snapshot.catalog.byName.get(TOOL_SEARCH_NAME)?.find((candidate) => candidate.source === 'builtin') ?? this.toolSearch;
      const { handler } = createToolSearchTool((principal, mode) => this.poolFor(principal, mode, toolset));
      tool = Object.freeze({ ...shared, handler });
      snapshot.pools.toolSearches.set(key, tool);
    }
    return tool;
  }

  /**
   * The principal's pool, with the caller's own MCP tools when `ownTools` asks for them; without them (and
   * saying so) while the store cannot list them.
   */
  private async poolIn(snapshot: Snapshot, principal: Principal, requestedMode: ToolMode, ownTools: boolean): Promise<{ pool: Pool; userToolsUnavailable?: true }> {
    const tenant = snapshot.tenants.get(principal.tenant);
    if (!tenant) throw new UnknownTenantError(principal.tenant);
    const mode = tenant.effectiveMode(requestedMode);
    if (!ownTools || !this.deps.userProvider || !tenant.config.userMcp.enabled) return { pool: this.sharedPool(snapshot, tenant, principal, mode) };
    let userTools: readonly Tool[];
    try {
      userTools = await this.deps.userProvider.toolsFor(principal, this.deps.log);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      return { pool: this.sharedPool(snapshot, tenant, principal, mode), userToolsUnavailable: true };
    }
    return { pool: userTools.length > 0 ? this.userPool(snapshot, tenant, principal, mode, userTools) : this.sharedPool(snapshot, tenant, principal, mode) };
  }

  /** The pool of a principal with tools of its own: cached on the snapshot by that list of tools. */
  private userPool(snapshot: Snapshot, tenant: TenantView, principal: Principal, mode: ToolMode, userTools: readonly Tool[]): Pool {
    let byKey = snapshot.pools.byUserTools.get(userTools);
    if (!byKey) snapshot.pools.byUserTools.set(userTools, (byKey = new Map()));
    const key = `${principal.tenant}\u0000${mode}\u0000${rolesKey(principal)}`;
    let pool = byKey.get(key);
    if (!pool) {
      pool = assemblePool({ catalog: snapshot.catalog, tenant, principal, mode, userTools, onShadowed: this.onShadowed });
      if (byKey.size >= MAX_CACHED_POOLS) byKey.clear();
      byKey.set(key, pool);
    }
    return pool;
  }

  /** The pool of a principal without tools of its own: one per tenant, mode and role set, cached on the snapshot. */
  private sharedPool(snapshot: Snapshot, tenant: TenantView, principal: Principal, mode: ToolMode): Pool {
    const byPrincipal = snapshot.pools.byPrincipal[mode];
    let pool = byPrincipal.get(principal);
    if (pool) return pool;
    const key = `${principal.tenant}\u0000${mode}\u0000${rolesKey(principal)}`;
    const byKey = snapshot.pools.byKey;
    pool = byKey.get(key);
    if (!pool) {
      pool = assemblePool({ catalog: snapshot.catalog, tenant, principal, mode, userTools: [], onShadowed: this.onShadowed });
      if (byKey.size >= MAX_CACHED_POOLS) byKey.clear();
      byKey.set(key, pool);
    }
    byPrincipal.set(principal, pool);
    return pool;
  }

  /** The one execution path, on the snapshot live when the call starts. */
  async execute(request: CallRequest, options: CallOptions, toolset?: string, view: ToolsetView = 'listed'): Promise<ToolResult> {
    return executeCall(request, options, await this.scopeFor(this.snapshot, options.principal, options.mode, [request.name], toolset, view));
  }

  /**
   * Resolves the snapshot-bound pieces of the calls of `names` once, e.g. for every call of a batch. The
   * caller's own MCP tools are listed only when one of the names can need them (callNeedsOwnTools). While
   * the store cannot say which MCP servers the caller registered, their tools are left out and everything
   * else stays usable; a call to one of them answers why (see executeCall).
   */
  async scopeFor(snapshot: Snapshot, principal: Principal, requestedMode: ToolMode, names: readonly unknown[], toolset?: string, view: ToolsetView = 'listed'): Promise<ExecutionScope> {
    const tenant = snapshot.tenants.get(principal.tenant);
    const chain = snapshot.chains.get(principal.tenant);
    if (!tenant || !chain) throw new UnknownTenantError(principal.tenant);
    const ownTools = names.some((name) => callNeedsOwnTools(tenant, name));
    const { pool: whole, userToolsUnavailable } = await this.poolIn(snapshot, principal, requestedMode, ownTools);
    const pool = toolset === undefined ? whole : this.subsetOf(snapshot, whole, tenant.id, toolset, view);
    let scope = snapshot.pools.scopes.get(pool);
    if (!scope) {
      scope = { catalog: snapshot.catalog, tenant, pool, chain, validatorFor: this.validatorFor, metrics: this.deps.metrics, audit: this.deps.policyDeps.audit };
      snapshot.pools.scopes.set(pool, scope);
    }
    return userToolsUnavailable ? { ...scope, userToolsUnavailable } : scope;
  }

  /** The live snapshot, for callers that must run several calls on one config version. */
  current(): Snapshot {
    return this.snapshot;
  }

  status(): UpstreamStatus[] {
    return [...this.snapshot.providers.values()].flatMap((provider) => provider.status?.() ?? []).concat(this.deps.userProvider?.status?.() ?? []);
  }

  /**
   * The MCP services whose resources and prompts the principal may reach, on the live snapshot: the global
   * services on its tenant's `mcpServices`, every local service, and its own servers when the tenant allows
   * them (left out while the store cannot list them). docs/architecture.md#resources-and-prompts
   */
  async mcpServicesFor(principal: Principal): Promise<{ tenant: TenantView; services: McpService[] }> {
    const snapshot = this.snapshot;
    const tenant = snapshot.tenants.get(principal.tenant);
    if (!tenant) throw new UnknownTenantError(principal.tenant);
    const allowed = new Set(tenant.config.mcpServices);
    const services = [...snapshot.providers.values()]
      .flatMap((provider) => provider.mcpServices?.() ?? [])
      .filter((service) => service.scope !== 'global' || allowed.has(service.service));
    const userProvider = this.deps.userProvider;
    if (!tenant.config.userMcp.enabled || !userProvider?.servicesFor) return { tenant, services };
    try {
      return { tenant, services: [...services, ...(await userProvider.servicesFor(principal, this.deps.log))] };
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      return { tenant, services };
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.snapshot.providers.values()].map((provider) => provider.close?.()));
    await this.deps.userProvider?.close?.();
  }
}

export type { Snapshot };
