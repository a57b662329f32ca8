import type { GatewayConfig, TenantConfig } from './config/types.js';
import { executeCall, type CallOptions, type CallRequest, type ExecutionScope } from './execution/execute.js';
import { TenantInFlight } from './execution/tenant-in-flight.js';
import { createSchemaValidator } from './execution/schema-validator.js';
import type { GatewayMetrics } from './observability/gateway-metrics.js';
import type { BuiltinPolicies, PolicyDeps } from './pipeline/types.js';
import { createShadowReporter, type Pool } from './registry/pool.js';
import type { McpService, UpstreamStatus, UserToolProvider } from './registry/tool-provider.js';
import { resolveToolName } from './registry/resolve.js';
import type { TenantView, Toolset } from './registry/tenant-view.js';
import { createToolSearchTool } from './registry/tool-search.js';
import { userNamespace } from './registry/user-names.js';
import { CallerPools } from './snapshot/caller-pools.js';
import { LiveSnapshot } from './snapshot/live-snapshot.js';
import type { CodeModeSource, ToolsetHost, ToolsetView } from './snapshot/pool-cache.js';
import { compileTenant, type ProviderSpec, type Snapshot, type StoredTenantSource } from './snapshot/snapshot.js';
import { isStoreUnavailable } from './store/unavailable.js';
import type { Logger, Tool, ToolMode, ToolResult } from './call/types.js';
import type { Principal } from './call/principal.js';
import { errors } from './errors.js';

export interface GatewayDeps {
  log: Logger;
  metrics: GatewayMetrics;
  env: NodeJS.ProcessEnv;
  /** Builds the tool providers a config asks for (function, built-in, RAG, MCP…). */
  providerSpecs: (config: GatewayConfig) => ProviderSpec[];
  userProvider?: UserToolProvider;
  /** Store, approvals, audit sink and metrics shared by every tenant's policy chain. */
  policyDeps: PolicyDeps;
  /** The built-in policies each tenant's chain is made of (policies/index.ts). */
  builtinPolicies: BuiltinPolicies;
  /** The module (URL) exporting them as `builtinPolicies`, for the start's check of many tenants in a child process. */
  builtinPoliciesModule?: string;
  /** Tenants created through the tenant API (src/tenants/records.ts); none without it. */
  storedTenants?: StoredTenantSource;
  /** Code mode's tools and pools (src/code-mode/source.ts), injected so the core imports no tool source. */
  codeMode: CodeModeSource;
}


/**
 * What routes ask of the live configuration: the caller's pool (owned by src/snapshot/caller-pools.ts), the one
 * execution path on it, the MCP services it reaches. The snapshot itself and its replacement belong to
 * src/snapshot/live-snapshot.ts.
 */
export class Gateway {
  /** Calls in flight per tenant: requests that run calls (admission) and code mode's inner calls. */
  readonly inFlight = new TenantInFlight();
  private readonly pools: CallerPools;

  private constructor(
    private readonly deps: GatewayDeps,
    private readonly live: LiveSnapshot,
  ) {
    this.pools = new CallerPools({
      log: deps.log,
      metrics: deps.metrics,
      audit: deps.policyDeps.audit,
      validatorFor: createSchemaValidator(),
      userProvider: deps.userProvider,
      codeMode: deps.codeMode,
      toolsetHost: (toolset) => this.toolsetHost(toolset),
    });
  }

  static async create(config: GatewayConfig, deps: GatewayDeps): Promise<Gateway> {
    // One tool_search for every catalog: it searches the pool its call was resolved in, which the
    // execution path names in the call's context.
    const registryTools = [createToolSearchTool()];
    const onShadowed = createShadowReporter(deps.log, (winner, loser) => deps.metrics.toolShadowed.inc({ winner: winner.source, loser: loser.source }));
    const live = await LiveSnapshot.create(config, { ...deps, registryTools, onShadowed }, deps.metrics);
    return new Gateway(deps, live);
  }

  get config(): GatewayConfig {
    return this.live.current.config;
  }

  /**
   * The tenant's view when it is compiled already (every request's tenant is: authentication compiles it
   * with `loadTenant`), else undefined.
   */
  tenant(id: string): TenantView | undefined {
    return this.live.current.tenants.get(id)?.view;
  }

  /**
   * The tenant's `limits.maxInFlight` on the live snapshot: at once from its compiled view, else once it is
   * compiled again (the bounded cache may have dropped it since authentication compiled it); undefined for a
   * tenant configured nowhere now.
   */
  inFlightLimit(id: string): number | undefined | Promise<number | undefined> {
    const view = this.tenant(id);
    if (view) return view.config.limits.maxInFlight;
    return this.loadTenant(id).then((loaded) => loaded?.config.limits.maxInFlight);
  }

  /** The tenant's view, compiled now on its first use; undefined for a tenant configured nowhere. */
  async loadTenant(id: string): Promise<TenantView | undefined> {
    return (await this.live.current.tenants.load(id))?.view;
  }

  /** Compiles a tenant configuration on the live snapshot as its first request would, keeping nothing: a bad one throws. */
  async checkTenant(id: string, tenant: TenantConfig): Promise<void> {
    await compileTenant(id, tenant, this.config, this.deps, this.live.current.catalog);
  }

  /** One tenant changed (tenant API, on any replica): it is compiled again on its next request. */
  invalidateTenant(id: string): void {
    this.live.invalidateTenant(id);
  }

  /** Swaps in a snapshot of `next` (src/snapshot/live-snapshot.ts); the reload path is src/snapshot/reload.ts. */
  reload(next: GatewayConfig): Promise<{ changed: boolean }> {
    return this.live.reload(next);
  }

  /** Told after every swap of the live snapshot: any principal's pool may differ now. Returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    return this.live.onChange(listener);
  }

  /** The principal's pool on the live snapshot, or its subset in one of the tenant's toolsets (404 for an unknown one). */
  poolFor(principal: Principal, requestedMode: ToolMode, toolset?: string, view: ToolsetView = 'listed'): Promise<Pool> {
    return this.pools.poolFor(this.live.current, principal, requestedMode, toolset, view);
  }

  /** Throws TG_NOT_FOUND unless the principal's tenant has this toolset in the live config. */
  assertToolset(principal: Principal, toolset: string): void {
    if (!this.tenant(principal.tenant)?.toolset(toolset)) throw new errors.TG_NOT_FOUND(`unknown toolset: ${toolset}`);
  }

  /** How a code-mode toolset's scripts reach its subset: through the one call path, holding in-flight slots. */
  private toolsetHost(toolset: Toolset): ToolsetHost {
    return {
      poolFor: (principal, mode) => this.poolFor(principal, mode, toolset.name, 'scripted'),
      execute: (request, options) => this.execute(request, options, toolset.name, 'scripted'),
      holdSlot: async (tenant) => {
        const limit = await this.inFlightLimit(tenant);
        if (limit === undefined || !this.inFlight.tryEnter(tenant, limit)) return { refused: `the tenant has ${limit ?? 0} calls in flight; try again shortly` };
        return { release: () => this.inFlight.leave(tenant) };
      },
      // An inner call's arguments are bounded as a request body is: they are parsed and validated on this thread.
      maxArgumentBytes: this.config.server.bodyLimit,
    };
  }

  /** The one execution path, on the snapshot live when the call starts. */
  async execute(request: CallRequest, options: CallOptions, toolset?: string, view: ToolsetView = 'listed'): Promise<ToolResult> {
    return executeCall(request, options, await this.pools.scopeFor(this.live.current, options.principal, options.mode, [request.name], toolset, view));
  }

  /** The snapshot-bound pieces of the calls of `names` on `snapshot`, resolved once (src/snapshot/caller-pools.ts). */
  scopeFor(snapshot: Snapshot, principal: Principal, requestedMode: ToolMode, names: readonly unknown[], toolset?: string, view: ToolsetView = 'listed'): Promise<ExecutionScope> {
    return this.pools.scopeFor(snapshot, principal, requestedMode, names, toolset, view);
  }

  /**
   * Which tools the principal's tenant holds for a human (its approval policy's `tools`,
   * docs/governance.md#human-approval), on the live snapshot: read from config, nothing runs.
   */
  approvalGate(principal: Principal): (tool: Tool) => boolean {
    const chain = this.live.current.tenants.get(principal.tenant)?.chain;
    return (tool) => chain?.applies('approval', tool) === true;
  }

  /**
   * The tool a call of `name` would run (resolved as the execution path resolves it: aliases included), or
   * undefined for a name that call would refuse. Nothing runs.
   */
  async toolCalled(principal: Principal, requestedMode: ToolMode, name: string, toolset?: string): Promise<Tool | undefined> {
    const scope = await this.scopeFor(this.live.current, principal, requestedMode, [name], toolset);
    const resolution = resolveToolName(name, scope.pool, scope.catalog, userNamespace(principal.user), scope.tenant.reaches);
    return resolution.ok ? resolution.tool : undefined;
  }

  /** The live snapshot, for callers that must run several calls on one config version. */
  current(): Snapshot {
    return this.live.current;
  }

  /** `tenant`: what is per tenant (users' own servers) is counted for that tenant only. */
  status(tenant?: string): UpstreamStatus[] {
    return [...this.live.current.providers.values()].flatMap((provider) => provider.status?.() ?? []).concat(this.deps.userProvider?.status?.(tenant) ?? []);
  }

  /**
   * The MCP services whose resources and prompts the principal may reach, on the live snapshot: the global
   * services on its tenant's `mcpServices`, every local service, and its own servers when the tenant allows
   * them (left out while the store cannot list them). docs/architecture.md#resources-and-prompts
   */
  async mcpServicesFor(principal: Principal): Promise<{ tenant: TenantView; services: McpService[] }> {
    const snapshot = this.live.current;
    const { view: tenant } = await this.pools.compiledTenant(snapshot, principal.tenant);
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
    await this.live.close();
    await this.deps.userProvider?.close?.();
  }
}
