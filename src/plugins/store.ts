import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types.js';
import type { MessageBus } from '../store/bus.js';
import { createBus, createStore } from '../store/create.js';
import { storeObservability } from '../store/store-observability.js';
import type { StateStore } from '../store/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared state store (`store.kind`): counts, approvals, tasks, sessions, registrations (docs/architecture.md#state-store). */
    store: StateStore;
    /** Messages between replicas (MCP session notifications and cancellations), beside the store. */
    bus: MessageBus;
  }
}

export interface StorePluginOptions {
  config: GatewayConfig['store'];
  registry: Registry;
  /** A store the caller made and closes (tests, benchmarks); otherwise `store.kind` names it and this plugin closes it. */
  store?: StateStore | undefined;
}

/**
 * The state store and the message bus. A store that can never connect (a Redis certificate that is not
 * trusted) stops start-up with the reason; one that is merely down does not. Registered first of the
 * services, so it closes last: audit, approvals and tasks write to it until they are closed.
 */
export const storePlugin = fp<StorePluginOptions>(
  async (app, options) => {
    const owned = options.store === undefined;
    const observed = storeObservability(options.registry, app.log);
    const store = options.store ?? createStore(options.config, observed.hooks);
    observed.watch(store);
    const bus = createBus(options.config);
    const close = async (): Promise<void> => {
      await bus.close();
      if (owned) await store.close();
    };
    await store.verifyConnection?.().catch(async (error: unknown) => {
      await close();
      throw error;
    });
    app.decorate('store', store);
    app.decorate('bus', bus);
    app.addHook('onClose', close);
  },
  { name: 'toolgate-store' },
);
