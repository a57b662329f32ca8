import type { AuditSink } from '../audit/types.js';
import type { ExecutionScope } from '../execution/execute.js';
import type { PrepareScope } from '../execution/prepare.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import { callNeedsOwnTools, type Pool } from '../registry/pool.js';
import type { UserToolProvider } from '../registry/tool-provider.js';
import type { TenantView, Toolset } from '../registry/tenant-view.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Principal } from '../call/principal.js';
import type { Logger, Tool, ToolMode } from '../call/types.js';
import { DomainError, errors } from '../errors.js';
import type { CodeModeSource, ToolsetHost, ToolsetView } from './pool-cache.js';
import type { Snapshot } from './snapshot.js';
import type { CompiledTenant } from './tenant-table.js';

/** The principal's tenant is not (or no longer) configured; its message names the tenant, for logs only. */
export class UnknownTenantError extends DomainError {
  readonly gatewayCode = 'TG_UNKNOWN_TENANT';
  override readonly showsMessage = false;
}

export interface CallerPoolsDeps {
  log: Logger;
  metrics: GatewayMetrics;
  /** Where refusals before the policy chain are audited. */
  audit: AuditSink;
  validatorFor: PrepareScope['validatorFor'];
  userProvider?: UserToolProvider | undefined;
  /** Code mode's tools and pools (src/code-mode/source.ts), injected by the root so the core imports no tool source. */
  codeMode: CodeModeSource;
  /** How a code-mode toolset's scripts reach its subset: the one call path, holding in-flight slots. */
  toolsetHost: (toolset: Toolset) => ToolsetHost;
}

/**
 * The one owner of a caller's pool on a snapshot (docs/architecture.md#catalog-and-pools): its tenant compiled
 * on first use, the shared pool or the one with the caller's own MCP tools, a toolset's subset (code mode's
 * pool through the injected source), and the execution scope kept per pool. The caches live on the snapshot's
 * compiled tenant (src/snapshot/pool-cache.ts); a new snapshot starts them afresh.
 */
export class CallerPools {
  constructor(private readonly deps: CallerPoolsDeps) {}

  /** The tenant compiled on `snapshot` (now, on its first use); a tenant configured nowhere is unknown. */
  async compiledTenant(snapshot: Snapshot, id: string): Promise<CompiledTenant> {
    const compiled = snapshot.tenants.get(id) ?? (await snapshot.tenants.load(id));
    if (!compiled) throw new UnknownTenantError(id);
    return compiled;
  }

  /** The principal's pool on `snapshot` (with its own tools), or its subset in one of the tenant's toolsets (404 for an unknown one). */
  async poolFor(snapshot: Snapshot, principal: Principal, requestedMode: ToolMode, toolset?: string, view: ToolsetView = 'listed'): Promise<Pool> {
    const compiled = await this.compiledTenant(snapshot, principal.tenant);
    const { pool } = await this.whole(compiled, principal, requestedMode, true);
    return toolset === undefined ? pool : this.subsetOf(compiled, pool, toolset, view);
  }

  /**
   * The snapshot-bound pieces of the calls of `names`, resolved once (e.g. for every call of a batch). The
   * caller's own MCP tools are listed only when one of the names can need them (callNeedsOwnTools). While the
   * store cannot say which MCP servers the caller registered, their tools are left out and everything else
   * stays usable; a call to one of them answers why (src/execution/execute.ts).
   */
  scopeFor(snapshot: Snapshot, principal: Principal, requestedMode: ToolMode, names: readonly unknown[], toolset?: string, view: ToolsetView = 'listed'): Promise<ExecutionScope> {
    const compiled = snapshot.tenants.get(principal.tenant);
    // Most calls find their tenant compiled and list no tools of the caller's own: nothing to wait for, so
    // no async step (each one a frame and promises per call on every request path).
    if (compiled === undefined || this.listsOwnTools(compiled.view, names)) return this.scopeAfterLoading(snapshot, compiled, principal, requestedMode, names, toolset, view);
    try {
      return Promise.resolve(this.scopeOn(snapshot, compiled, this.shared(compiled, principal, requestedMode), toolset, view));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** scopeFor with a wait: the tenant compiled first (`known` when it is already), or the caller's own tools listed. */
  private async scopeAfterLoading(snapshot: Snapshot, known: CompiledTenant | undefined, principal: Principal, requestedMode: ToolMode, names: readonly unknown[], toolset: string | undefined, view: ToolsetView): Promise<ExecutionScope> {
    const compiled = known ?? (await this.compiledTenant(snapshot, principal.tenant));
    const { pool, userToolsUnavailable } = await this.whole(compiled, principal, requestedMode, this.listsOwnTools(compiled.view, names));
    const scope = this.scopeOn(snapshot, compiled, pool, toolset, view);
    return userToolsUnavailable ? { ...scope, userToolsUnavailable } : scope;
  }

  /** The execution scope of `whole` (or of its subset in `toolset`), kept once per pool. */
  private scopeOn(snapshot: Snapshot, compiled: CompiledTenant, whole: Pool, toolset: string | undefined, view: ToolsetView): ExecutionScope {
    const { view: tenant, chain, pools } = compiled;
    const pool = toolset === undefined ? whole : this.subsetOf(compiled, whole, toolset, view);
    const { metrics, audit, validatorFor } = this.deps;
    return pools.scopeOf(pool) ?? pools.keepScope(pool, { catalog: snapshot.catalog, tenant, pool, chain, validatorFor, metrics, audit });
  }

  /** Whether a call of one of `names` lists the caller's own MCP tools: only where the tenant has them at all. */
  private listsOwnTools(tenant: TenantView, names: readonly unknown[]): boolean {
    if (this.deps.userProvider === undefined || !tenant.config.userMcp.enabled) return false;
    for (const name of names) if (callNeedsOwnTools(tenant, name)) return true;
    return false;
  }

  /** The pool of a principal without tools of its own. */
  private shared(compiled: CompiledTenant, principal: Principal, requestedMode: ToolMode): Pool {
    const { view: tenant, pools } = compiled;
    return pools.shared(tenant, principal, tenant.effectiveMode(requestedMode));
  }

  /**
   * The principal's whole pool, with its own MCP tools when `ownTools` asks for them (listsOwnTools); without
   * them (and saying so) while the store cannot list them.
   */
  private async whole(compiled: CompiledTenant, principal: Principal, requestedMode: ToolMode, ownTools: boolean): Promise<{ pool: Pool; userToolsUnavailable?: true }> {
    const { view: tenant, pools } = compiled;
    const { userProvider, log } = this.deps;
    if (!ownTools || !userProvider || !tenant.config.userMcp.enabled) return { pool: this.shared(compiled, principal, requestedMode) };
    const mode = tenant.effectiveMode(requestedMode);
    let userTools: readonly Tool[];
    try {
      userTools = await userProvider.toolsFor(principal, log);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      return { pool: pools.shared(tenant, principal, mode), userToolsUnavailable: true };
    }
    return { pool: userTools.length > 0 ? pools.withUserTools(tenant, principal, mode, userTools) : pools.shared(tenant, principal, mode) };
  }

  private subsetOf(compiled: CompiledTenant, pool: Pool, name: string, view: ToolsetView): Pool {
    const toolset = compiled.view.toolset(name);
    // Another tenant's toolset is unknown here, exactly as a name nobody configured.
    if (!toolset) throw new errors.TG_NOT_FOUND(`unknown toolset: ${name}`);
    return compiled.pools.subset(pool, compiled.view.id, toolset, view, this.deps.codeMode, this.deps.toolsetHost);
  }
}

