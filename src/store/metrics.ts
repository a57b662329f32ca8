import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../types.js';
import type { StoreHooks } from './create.js';
import type { StateStore } from './types.js';

/**
 * `toolgate_store_up` (1 while the store answers, read at scrape time) and
 * `toolgate_store_unavailable_total{operation}` (operations that failed because it did not), plus one
 * log line when the store goes down and one when it is back, never one per failed call.
 */
export function storeObservability(registry: Registry, log: Logger): { hooks: StoreHooks; watch(store: StateStore): void } {
  const unavailable = new Counter({
    name: 'toolgate_store_unavailable_total',
    help: 'State store operations that failed because the store did not answer (down, unreachable or too slow)',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  let watched: StateStore | undefined;
  new Gauge({
    name: 'toolgate_store_up',
    help: 'Whether the shared state store answers (1) or not (0); an in-process store is always up',
    registers: [registry],
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
