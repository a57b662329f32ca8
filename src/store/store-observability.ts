import type { Registry } from 'prom-client';
import { counter, gauge, METRICS } from '../observability/metric-table.js';
import type { Logger } from '../call/types.js';
import type { StoreHooks } from './create.js';
import type { StateStore } from './types.js';

/**
 * `toolgate_store_up` (1 while the store answers, read at scrape time) and
 * `toolgate_store_unavailable_total{operation}` (operations that failed because it did not), plus one
 * log line when the store goes down and one when it is back, never one per failed call.
 */
export function storeObservability(registry: Registry, log: Logger): { hooks: StoreHooks; watch(store: StateStore): void } {
  const unavailable = counter(registry, METRICS.storeUnavailable);
  let watched: StateStore | undefined;
  gauge(registry, METRICS.storeUp, {
    collect() {
      this.set(watched?.up === undefined || watched.up() ? 1 : 0);
    },
  });
  return {
    hooks: {
      onUnavailable: (operation) => unavailable.inc({ operation }),
      onStateChange: (up, error) => {
        if (up) log.info('state store connected');
        else log.error({ err: error }, 'state store unavailable: rate limits follow store.onUnavailable, approvals and user MCP registrations are refused until it is back');
      },
    },
    watch(store) {
      watched = store;
    },
  };
}
