import type { GatewayConfig } from '../config/types.js';
import { sameConfig } from '../config/compact-tenants.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { ToolProvider } from '../registry/tool-provider.js';
import { buildSnapshot, withFreshCatalog, type Snapshot, type SnapshotDeps } from './snapshot.js';

/**
 * The one live snapshot reference, and every way it is replaced: a reload (a complete new snapshot beside
 * the old one, then one swap), and a provider whose tools changed on their own (a new catalog on the live
 * snapshot). Requests read `current` once and keep that object to the end.
 */
export class LiveSnapshot {
  private snapshot!: Snapshot;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly changeListeners = new Set<() => void>();
  /** Tenants invalidated while a reload builds its snapshot from the live one: invalidated again after the swap. */
  private invalidatedDuringReload: Set<string> | undefined;

  private constructor(
    private readonly deps: SnapshotDeps,
    private readonly metrics: Pick<GatewayMetrics, 'reloaded'>,
  ) {}

  static async create(config: GatewayConfig, deps: SnapshotDeps, metrics: Pick<GatewayMetrics, 'reloaded'>): Promise<LiveSnapshot> {
    const live = new LiveSnapshot(deps, metrics);
    live.snapshot = await buildSnapshot(config, undefined, deps, (provider) => live.refreshCatalog(provider));
    return live;
  }

  get current(): Snapshot {
    return this.snapshot;
  }

  /**
   * Validated config in, atomic swap out. A failure leaves the old snapshot serving. In-flight calls
   * keep the snapshot they started with; providers no longer used are closed after the swap. Reloads run
   * one at a time.
   */
  async reload(next: GatewayConfig): Promise<{ changed: boolean }> {
    const run = this.reloading.then(async () => {
      const previous = this.snapshot;
      let snapshot: Snapshot;
      const invalidated = (this.invalidatedDuringReload = new Set());
      try {
        snapshot = await buildSnapshot(next, previous, this.deps, (provider) => this.refreshCatalog(provider));
      } catch (error) {
        this.metrics.reloaded(false);
        throw error;
      } finally {
        this.invalidatedDuringReload = undefined;
      }
      for (const id of invalidated) snapshot.tenants.invalidate(id);
      this.snapshot = snapshot;
      this.metrics.reloaded(true);
      this.changed();
      const kept = new Set(snapshot.providers.values());
      const retired = [...previous.providers.values()].filter((provider) => !kept.has(provider));
      await Promise.allSettled(retired.map((provider) => provider.close?.()));
      // Tenants read tenant by tenant are compared by their texts (src/config/compact-tenants.ts), not made.
      return { changed: !sameConfig(previous.config, next) };
    });
    this.reloading = run.catch(() => undefined);
    return run;
  }

  /**
   * One tenant changed (the tenant API, on any replica): what was compiled for it is dropped, so its next
   * request compiles it again; calls under way finish on the compiled tenant they hold.
   */
  invalidateTenant(id: string): void {
    this.snapshot.tenants.invalidate(id);
    this.invalidatedDuringReload?.add(id);
  }

  /**
   * Told after every swap of the live snapshot (reload, an upstream's tool list changing, a pinned
   * definition released): any principal's pool may differ now. Returns the unsubscribe.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  /** A provider's tools changed (MCP list_changed, reconnect): rebuild the catalog of the live snapshot. */
  private refreshCatalog(provider: ToolProvider): void {
    // A provider of a snapshot still being built (the first one, or a reload's) changed while a later
    // provider was starting: that snapshot's catalog is made after every start, so it sees the change.
    const current: Snapshot | undefined = this.snapshot;
    if (!current || ![...current.providers.values()].includes(provider)) return;
    this.snapshot = withFreshCatalog(current, this.deps);
    this.changed();
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

  async close(): Promise<void> {
    await Promise.allSettled([...this.snapshot.providers.values()].map((provider) => provider.close?.()));
  }
}
