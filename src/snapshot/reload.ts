import { settingsNeedingRestart } from '../config/restart-required.js';
import type { GatewayConfig } from '../config/types.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { Logger } from '../call/types.js';

/** What a reload did: whether the config changed, and which changed settings apply only after a restart. */
export interface ReloadOutcome {
  changed: boolean;
  restartRequired: string[];
}

export interface ConfigReloadDeps {
  /** The config the process started with: start-up settings still run on it. */
  started: GatewayConfig;
  /** Re-reads the config source (validated); without it a reload applies the live config again. */
  load?: (() => Promise<GatewayConfig>) | undefined;
  /** The live snapshot: its config, and its swap (Gateway.reload). */
  live: { readonly config: GatewayConfig; reload(next: GatewayConfig): Promise<{ changed: boolean }> };
  metrics: Pick<GatewayMetrics, 'reloaded'>;
  /**
   * What a config version decides outside the snapshot (the authenticator: keys, JWT settings): built
   * before the swap, so a failure refuses the reload; the function it returns puts it in place after.
   */
  prepare?: (next: GatewayConfig) => Promise<() => void>;
}

/**
 * The reload path (docs/architecture.md#config-snapshot-and-reload), whatever triggers it — the admin
 * route, SIGHUP, a file change: read and validate the config, prepare what lives beside the snapshot, swap
 * the snapshot, and name the changed settings that wait for a restart. A failure before the swap leaves
 * everything serving as it was and counts a failed reload.
 */
export function createConfigReload(deps: ConfigReloadDeps): () => Promise<ReloadOutcome> {
  return async () => {
    let next: GatewayConfig;
    let commit: (() => void) | undefined;
    try {
      next = deps.load ? await deps.load() : deps.live.config;
      commit = await deps.prepare?.(next);
    } catch (error) {
      deps.metrics.reloaded(false);
      throw error;
    }
    const { changed } = await deps.live.reload(next);
    commit?.();
    // Start-up settings are compared with the config the process started with: they still run on it.
    return { changed, restartRequired: settingsNeedingRestart(deps.started, next) };
  };
}

/** One log line per reload (admin route, SIGHUP, file watch); a warning when some changes wait for a restart. */
export function logReload(log: Logger, { changed, restartRequired }: ReloadOutcome, trigger?: string): void {
  if (restartRequired.length > 0) log.warn({ changed, restartRequired, trigger }, 'configuration reloaded; changed settings that apply only after a restart');
  else log.info({ changed, trigger }, 'configuration reloaded');
}
