import { isDeepStrictEqual } from 'node:util';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig, TenantConfig } from '../config/types.js';
import { sameTenant } from '../config/compact-tenants.js';
import type { PolicyChain } from '../pipeline/chain.js';
import type { Catalog } from '../registry/catalog.js';
import type { ShadowReport } from '../registry/pool.js';
import type { TenantView } from '../registry/tenant-view.js';
import type { Logger } from '../call/types.js';
import { PoolCache } from './pool-cache.js';

/** Where a tenant's configuration comes from: the file, or the state store at a revision. */
export type TenantOrigin = { readonly source: 'file' } | { readonly source: 'store'; readonly revision: number };

/** What one tenant's configuration compiles to: its exposure rules and policy chain. */
export interface TenantParts {
  readonly view: TenantView;
  readonly chain: PolicyChain;
}

/** A compiled tenant on one snapshot: its parts, and the pools derived from them and that snapshot's catalog. */
export interface CompiledTenant extends TenantParts {
  readonly origin: TenantOrigin;
  readonly pools: PoolCache;
}

export interface TenantTableDeps {
  log: Logger;
  onShadowed: ShadowReport;
  /** Compiles a validated tenant configuration (the view and the policy chain). */
  compile: (id: string, tenant: TenantConfig, config: GatewayConfig, catalog: Catalog) => Promise<TenantParts>;
  /** A tenant kept in the state store, validated against `config`; undefined when there is none. */
  loadStored: (id: string, config: GatewayConfig) => Promise<{ tenant: TenantConfig; revision: number } | undefined>;
  /** The revision a store tenant has now (undefined: gone), for revalidating a compiled one. */
  storedRevision: (id: string) => Promise<number | undefined>;
  now?: () => number;
}

interface Entry {
  parts: TenantParts;
  origin: TenantOrigin;
  /** When a store tenant was last known to be at its revision (epoch ms). */
  checkedAt: number;
  compiled: CompiledTenant;
}

/**
 * A compiled tenant on one snapshot. Its pool cache is made on its first request on this snapshot: a reload
 * carrying thousands of compiled tenants over makes none. A class, not an object literal with a getter
 * (which V8 kept as a dictionary, with a closure and its context: ~0.6 KiB per warm tenant).
 */
class Compiled implements CompiledTenant {
  readonly view: TenantView;
  readonly chain: PolicyChain;
  #pools: PoolCache | undefined;

  constructor(
    parts: TenantParts,
    readonly origin: TenantOrigin,
    private readonly catalog: Catalog,
    private readonly onShadowed: ShadowReport,
  ) {
    this.view = parts.view;
    this.chain = parts.chain;
  }

  get pools(): PoolCache {
    return (this.#pools ??= new PoolCache(this.catalog, this.onShadowed));
  }
}

/**
 * The tenants of one snapshot, compiled on first use (docs/architecture.md#tenants-compiled-on-first-use): a
 * tenant is compiled when its first request asks for it and kept in a bounded LRU, so an idle tenant costs
 * only its configuration (or nothing, when it lives in the store). A request that holds a compiled tenant
 * keeps it to the end, whatever happens to the table meanwhile. File tenants win over store tenants of the
 * same id (the two are kept apart on writes and on reload).
 */
export class TenantTable {
  private readonly cache: LRUCache<string, Entry>;
  /**
   * Ids the store was asked for and did not hold, for `tenancy.unknownTtlMs`: a flood of tokens of a tenant
   * that does not exist costs one store read per id and period, not one per request. Bounded; an id created
   * (or changed) is dropped by its invalidation, so a new tenant is served at once.
   */
  private readonly unknown: LRUCache<string, true> | undefined;
  private readonly loading = new Map<string, Promise<Entry | undefined>>();
  /** Bumped by every invalidation of an id: a compile that started before it is not kept. */
  private readonly generations = new Map<string, number>();
  private readonly revalidating = new Set<string>();
  private readonly now: () => number;
  /**
   * The entry the last `get` found, and its id: a request asks for its tenant three times (authentication,
   * admission, the call's scope), and every request of a busy tenant asks for the same one. A repeated `get`
   * of that id answers from here without the LRU: while nothing was set or deleted since (each of those
   * forgets it), the LRU's own `get` would find the same entry, already the most recent, so recency is
   * unchanged either way (the table has no ttl).
   */
  private lastId: string | undefined;
  private lastEntry: Entry | undefined;

  constructor(
    private readonly config: GatewayConfig,
    private readonly catalog: Catalog,
    private readonly deps: TenantTableDeps,
  ) {
    this.now = deps.now ?? Date.now;
    this.cache = new LRUCache({ max: config.tenancy.compiledCacheSize });
    const { unknownTtlMs, unknownCacheSize } = config.tenancy;
    this.unknown = unknownTtlMs > 0 ? new LRUCache({ max: unknownCacheSize, ttl: unknownTtlMs, ttlAutopurge: false, perf: { now: this.now } }) : undefined;
  }

  /** How many tenants are compiled now (bounded by `tenancy.compiledCacheSize`). */
  get size(): number {
    return this.cache.size;
  }

  /** Whether `id` is compiled now (its recency and revalidation untouched). */
  isCompiled(id: string): boolean {
    return this.cache.has(id);
  }

  /** The compiled tenant when it is compiled already: the synchronous path of every warm request. */
  get(id: string): CompiledTenant | undefined {
    let entry = id === this.lastId ? this.lastEntry : undefined;
    if (entry === undefined) {
      entry = this.cache.get(id);
      if (entry === undefined) return undefined;
      this.lastId = id;
      this.lastEntry = entry;
    }
    this.revalidateIfDue(id, entry);
    return entry.compiled;
  }

  /** Every write to the LRU goes through here or `remove`: either may change what `get` would find. */
  private put(id: string, entry: Entry): void {
    this.forgetLast();
    this.cache.set(id, entry);
  }

  private remove(id: string): void {
    this.forgetLast();
    this.cache.delete(id);
  }

  private forgetLast(): void {
    this.lastId = undefined;
    this.lastEntry = undefined;
  }

  /** The compiled tenant, compiled now when it is not yet; undefined for a tenant that is not configured. */
  async load(id: string): Promise<CompiledTenant | undefined> {
    const cached = this.get(id);
    if (cached) return cached;
    if (this.unknown?.has(id)) return undefined;
    let pending = this.loading.get(id);
    if (!pending) {
      const generation = this.generations.get(id) ?? 0;
      const started: Promise<Entry | undefined> = this.compileEntry(id).finally(() => {
        if (this.loading.get(id) === started) this.loading.delete(id);
      });
      pending = started;
      this.loading.set(id, started);
      started
        .then((entry) => {
          if ((this.generations.get(id) ?? 0) !== generation) return;
          if (entry) this.put(id, entry);
          else this.unknown?.set(id, true);
        })
        .catch(() => undefined);
    }
    return (await pending)?.compiled;
  }

  /** Forgets what was compiled for `id` (it changed or went away): its next request compiles it again. */
  invalidate(id: string): void {
    // Only a compile under way can bring back what it read before the change.
    if (this.loading.has(id)) this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
    this.remove(id);
    this.unknown?.delete(id);
    this.loading.delete(id);
  }

  /**
   * The table of a snapshot with `catalog`: every compiled tenant kept, with empty pools (they derive from the
   * catalog). With `next` (a reload's config), only file tenants whose configuration is unchanged are kept,
   * and store tenants: what changed is compiled again on its next request.
   */
  derive(catalog: Catalog, next: GatewayConfig = this.config): TenantTable {
    const table = new TenantTable(next, catalog, this.deps);
    const sameBase = next.baseDir === this.config.baseDir && isDeepStrictEqual(next.mcp.global.map((s) => s.id), this.config.mcp.global.map((s) => s.id));
    // Oldest first, so the new table's recency order is the old one's.
    for (const [id, entry] of [...this.cache.entries()].reverse()) {
      if (!sameBase) break;
      if (entry.origin.source === 'file' && !sameTenant(this.config.tenants, next.tenants, id)) continue;
      if (entry.origin.source === 'store' && Object.hasOwn(next.tenants, id)) continue;
      table.put(id, table.entryOf(entry.parts, entry.origin, entry.checkedAt));
    }
    return table;
  }

  /** Compiles file tenants ahead of their next request (a reload's changed ones that were compiled), keeping them. */
  async precompile(ids: Iterable<string>): Promise<void> {
    for (const id of ids) {
      const tenant = this.config.tenants[id];
      if (tenant) this.put(id, this.entryOf(await this.deps.compile(id, tenant, this.config, this.catalog), { source: 'file' }, this.now()));
    }
  }

  private entryOf(parts: TenantParts, origin: TenantOrigin, checkedAt: number): Entry {
    return { parts, origin, checkedAt, compiled: new Compiled(parts, origin, this.catalog, this.deps.onShadowed) };
  }

  private async compileEntry(id: string): Promise<Entry | undefined> {
    const fromFile = Object.hasOwn(this.config.tenants, id) ? this.config.tenants[id] : undefined;
    if (fromFile) return this.entryOf(await this.deps.compile(id, fromFile, this.config, this.catalog), { source: 'file' }, this.now());
    const checkedAt = this.now();
    const stored = await this.deps.loadStored(id, this.config);
    if (!stored) return undefined;
    return this.entryOf(await this.deps.compile(id, stored.tenant, this.config, this.catalog), { source: 'store', revision: stored.revision }, checkedAt);
  }

  /** A store tenant not checked for `revalidateMs` is checked in the background; a warm request never waits. */
  private revalidateIfDue(id: string, entry: Entry): void {
    if (entry.origin.source !== 'store' || this.revalidating.has(id)) return;
    if (this.now() - entry.checkedAt < this.config.tenancy.revalidateMs) return;
    const { revision } = entry.origin;
    const checkedAt = this.now();
    this.revalidating.add(id);
    this.deps
      .storedRevision(id)
      .then((now) => {
        if (now === revision) entry.checkedAt = checkedAt;
        else if (this.cache.peek(id) === entry) this.invalidate(id);
      })
      .catch((error: unknown) => this.deps.log.warn({ err: error, tenant: id }, 'tenant revalidation failed; kept as compiled'))
      .finally(() => this.revalidating.delete(id));
  }
}
