import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Gateway } from '../gateway.js';
import type { Drain } from '../http/drain.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { ReloadOutcome } from '../snapshot/reload.js';

declare module 'fastify' {
  interface FastifyInstance {
    gateway: Gateway;
    metrics: GatewayMetrics;
    /** The metrics listener (src/server.ts listens on it), or undefined with `metrics.enabled: false`. */
    metricsServer: FastifyInstance | undefined;
    /** Re-reads the config source and swaps it in (admin route, SIGHUP, file watch): src/snapshot/reload.ts. */
    reloadConfig: () => Promise<ReloadOutcome>;
    /** Shutdown state: readiness, refusing new requests, cancelling running calls. */
    drain: Drain;
  }
}

/**
 * Shares the gateway runtime with every route, refuses new requests once the app starts closing, and closes the upstreams and the metrics listener when it has.
 */
export const gatewayPlugin = fp<{ gateway: Gateway; metrics: GatewayMetrics; metricsServer: FastifyInstance | undefined; reloadConfig: () => Promise<ReloadOutcome>; drain: Drain }>(
  async (app, { gateway, metrics, metricsServer, reloadConfig, drain }) => {
    app.decorate('drain', drain);
    app.decorate('gateway', gateway);
    app.decorate('metrics', metrics);
    app.decorate('metricsServer', metricsServer);
    app.decorate('reloadConfig', reloadConfig);
    // Whoever closes the app (SIGTERM through src/server.ts, a test), new requests are refused from then on.
    app.addHook('preClose', (done) => {
      drain.close();
      done();
    });
    app.addHook('onClose', async () => {
      await metricsServer?.close();
      await gateway.close();
    });
  },
  // Registered after the services: closed before them, so the store and the audit sink outlive the upstreams.
  { name: 'toolgate-gateway', dependencies: ['toolgate-store', 'toolgate-audit', 'toolgate-tasks', 'toolgate-policy-deps'] },
);
