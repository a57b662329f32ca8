import type { CallOptions, CallRequest, ExecutionScope } from '../execution/execute.js';
import type { Catalog } from '../registry/catalog.js';
import { assemblePool, type Pool, type ShadowReport } from '../registry/pool.js';
import type { TenantView, Toolset } from '../registry/tenant-view.js';
import { narrowPool } from '../registry/toolset-pool.js';
import type { Principal } from '../call/principal.js';
import type { Tool, ToolMode, ToolResult } from '../call/types.js';

/**
 * How a toolset is looked at: `listed` is what its endpoint serves (a code-mode toolset's three tools),
 * `scripted` the subset of tools itself, which a code-mode script calls. The same for any other toolset.
 */
export type ToolsetView = 'listed' | 'scripted';

/** How the scripts of a code-mode toolset reach it: the toolset's subset and the one call path on it. */
export interface ToolsetHost {
  /** The toolset's subset of the caller's pool: the tools a script may call. */
  poolFor(principal: Principal, mode: ToolMode): Promise<Pool>;
  /** One call in that subset, as a direct call of the caller would run. */
  execute(request: CallRequest, options: CallOptions): Promise<ToolResult>;
  /** Takes one of the tenant's in-flight slots for an inner call while it runs, or says why not. */
  holdSlot(tenant: string): Promise<{ release: () => void } | { refused: string }>;
  /** The largest inner call's arguments, in bytes (a request body's limit). */
  maxArgumentBytes: number;
}

/**
 * Code mode (docs/code-mode.md), handed in by the composition root (src/code-mode/source.ts) so the core
 * imports no tool source: the tools a code-mode toolset is listed with, and the pool they make.
 */
export interface CodeModeSource {
  tools(toolset: Toolset, host: ToolsetHost): readonly Tool[];
  pool(inner: Pool, tools: readonly Tool[]): Pool;
}

const MAX_CACHED_POOLS = 1000;

// Principals come from the token cache, so one object serves many requests: its sorted role list is
// computed once, not copied, sorted and joined on every call.
const roleKeys = new WeakMap<Principal, string>();
function rolesKey(principal: Principal): string {
  let key = roleKeys.get(principal);
  if (key === undefined) roleKeys.set(principal, (key = [...principal.roles].sort().join(',')));
  return key;
}

/** What a tenant's pools differ by besides mode: the role set, or, with Cedar policies, all they can read of the principal. */
const principalShape = (tenant: TenantView, principal: Principal): string => tenant.cedar?.principalKey(principal) ?? rolesKey(principal);

/**
 * The pools derived from one snapshot, built once and reused by every request on it (a new snapshot
 * starts with an empty cache): shared pools of principals without tools of their own, by tenant, mode
 * and role set and by the principal object itself (token-cache principals serve many calls, so most calls
 * skip building the key); pools of callers with tools of their own; toolset subsets; the execution scope
 * of each pool.
 */
export class PoolCache {
  constructor(
    private readonly catalog: Catalog,
    private readonly onShadowed: ShadowReport,
  ) {}

  private readonly byKey = new Map<string, Pool>();
  // The maps below are made on first use: a warm tenant that only lists holds two, not seven (~0.6 KiB less).
  private readonly byPrincipal: Partial<Record<ToolMode, WeakMap<Principal, Pool>>> = {};
  /** The execution scope of each pool (a pool belongs to one tenant): one object per pool, not per call. */
  private scopes: WeakMap<Pool, ExecutionScope> | undefined;
  /** Toolset subsets of each pool, by toolset name. */
  private subsets: WeakMap<Pool, Map<string, Pool>> | undefined;
  /**
   * Pools of callers with tools of their own, by their own tools' list (the same array until one of their
   * servers changes, src/mcp/user/user-mcp-provider.ts) and then by tenant, mode and role set: built once per change,
   * not per request (docs/security-model.md#user-catalog-bounds).
   */
  private byUserTools: WeakMap<readonly Tool[], Map<string, Pool>> | undefined;
  /** The three tools of each code-mode toolset (by tenant and name). */
  private codeTools: Map<string, readonly Tool[]> | undefined;

  /** The pool of a principal without tools of its own: one per tenant, mode and role set. */
  shared(tenant: TenantView, principal: Principal, mode: ToolMode): Pool {
    const byPrincipal = (this.byPrincipal[mode] ??= new WeakMap());
    let pool = byPrincipal.get(principal);
    if (pool) return pool;
    const key = `${principal.tenant}\u0000${mode}\u0000${principalShape(tenant, principal)}`;
    pool = this.byKey.get(key);
    if (!pool) {
      pool = assemblePool({ catalog: this.catalog, tenant, principal, mode, userTools: [], onShadowed: this.onShadowed });
      if (this.byKey.size >= MAX_CACHED_POOLS) this.byKey.clear();
      this.byKey.set(key, pool);
    }
    byPrincipal.set(principal, pool);
    return pool;
  }

  /** The pool of a principal with tools of its own: cached by that list of tools. */
  withUserTools(tenant: TenantView, principal: Principal, mode: ToolMode, userTools: readonly Tool[]): Pool {
    const byUserTools = (this.byUserTools ??= new WeakMap());
    let byKey = byUserTools.get(userTools);
    if (!byKey) byUserTools.set(userTools, (byKey = new Map()));
    const key = `${principal.tenant}\u0000${mode}\u0000${principalShape(tenant, principal)}`;
    let pool = byKey.get(key);
    if (!pool) {
      pool = assemblePool({ catalog: this.catalog, tenant, principal, mode, userTools, onShadowed: this.onShadowed });
      if (byKey.size >= MAX_CACHED_POOLS) byKey.clear();
      byKey.set(key, pool);
    }
    return pool;
  }

  /**
   * A toolset's subset of `pool` as `view` sees it. For a code-mode toolset's `listed` view, `codeMode`
   * makes its tools (once per tenant and toolset on this snapshot, `host` their way back in) and their pool.
   */
  subset(pool: Pool, tenantId: string, toolset: Toolset, view: ToolsetView, codeMode: CodeModeSource, host: (toolset: Toolset) => ToolsetHost): Pool {
    const ofPool = (this.subsets ??= new WeakMap());
    let subsets = ofPool.get(pool);
    if (!subsets) ofPool.set(pool, (subsets = new Map()));
    let subset = subsets.get(toolset.name);
    if (!subset) subsets.set(toolset.name, (subset = narrowPool(pool, toolset)));
    if (toolset.mode !== 'code' || view === 'scripted') return subset;
    const codeKey = `${toolset.name}\u0000code`;
    let code = subsets.get(codeKey);
    if (!code) subsets.set(codeKey, (code = codeMode.pool(subset, this.codeToolsOf(tenantId, toolset, () => codeMode.tools(toolset, host(toolset))))));
    return code;
  }

  private codeToolsOf(tenantId: string, toolset: Toolset, make: () => readonly Tool[]): readonly Tool[] {
    const key = `${tenantId}\u0000${toolset.name}`;
    const codeTools = (this.codeTools ??= new Map());
    let tools = codeTools.get(key);
    if (!tools) codeTools.set(key, (tools = make()));
    return tools;
  }

  /** The execution scope kept for `pool`, if any. */
  scopeOf(pool: Pool): ExecutionScope | undefined {
    return this.scopes?.get(pool);
  }

  keepScope(pool: Pool, scope: ExecutionScope): ExecutionScope {
    (this.scopes ??= new WeakMap()).set(pool, scope);
    return scope;
  }
}
