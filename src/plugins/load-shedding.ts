import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { errors } from '../errors.js';

/** Routes never shed: probes and metrics must answer most of all while the replica is overloaded. */
const NEVER_SHED = new Set(['/healthz', '/readyz', '/metrics']);

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the replica is shedding load now (`server.loadShedding`); false when it is off. */
    shedding(): boolean;
  }
}

/**
 * Load shedding on event-loop delay and utilisation (`server.loadShedding`, read once at start-up) through
 * @fastify/under-pressure: over a bound, a request answers 503 TG_OVERLOADED + Retry-After in onRequest,
 * before authentication or its body, so a saturated replica refuses early and the load balancer's other
 * replicas take the traffic; /readyz reports `shedding` meanwhile.
 */
export const loadSheddingPlugin = fp(
  async (app: FastifyInstance) => {
    const { maxEventLoopDelayMs, maxEventLoopUtilization, sampleIntervalMs, retryAfterSec } = app.gateway.config.server.loadShedding;
    if (maxEventLoopDelayMs === 0 && maxEventLoopUtilization === 0) {
      app.decorate('shedding', () => false);
      return;
    }
    await app.register(underPressure, {
      maxEventLoopDelay: maxEventLoopDelayMs,
      maxEventLoopUtilization,
      sampleInterval: sampleIntervalMs,
      retryAfter: retryAfterSec,
      // Over the last sample only: a replica that recovered takes traffic again at the next sample.
      eventLoopUtilizationMode: 'interval',
      // Nothing sent: the request goes on (the plugin's README). Sent: the error handler writes the TG_ body.
      pressureHandler: (request, reply) => {
        if (NEVER_SHED.has(request.url.split('?', 1)[0]!)) return;
        app.metrics.countOverload('pressure');
        reply.code(503).header('retry-after', String(retryAfterSec)).send(new errors.TG_OVERLOADED('replica is overloaded, retry later'));
      },
    });
    app.decorate('shedding', () => app.isUnderPressure());
  },
  { name: 'toolgate-load-shedding', dependencies: ['toolgate-gateway'] },
);
