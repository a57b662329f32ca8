import fp from 'fastify-plugin';
import type { Gateway } from '../gateway.js';
import type { GatewayMetrics } from '../observability/metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    gateway: Gateway;
    metrics: GatewayMetrics;
    /** Re-reads the config source and swaps it in (admin route, SIGHUP). */
    reloadConfig: () => Promise<{ changed: boolean }>;
  }
}

/** Shares the gateway runtime with every route and closes its upstreams when the app closes. */
export const gatewayPlugin = fp<{ gateway: Gateway; metrics: GatewayMetrics; reloadConfig: () => Promise<{ changed: boolean }> }>(
  async (app, { gateway, metrics, reloadConfig }) => {
    app.decorate('gateway', gateway);
    app.decorate('metrics', metrics);
    app.decorate('reloadConfig', reloadConfig);
    app.addHook('onClose', async () => {
      await gateway.close();
    });
  },
  { name: 'toolgate-gateway' },
);
