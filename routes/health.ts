import fp from 'fastify-plugin';
import type { UpstreamStatus } from '../src/registry/tool-provider.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/**
 * What /readyz answers (and `toolgate_ready` reports): draining first, then shedding load, then whether every
 * required upstream is up.
 */
export function readinessOf(upstreams: readonly UpstreamStatus[], draining: boolean, shedding = false): 'ready' | 'draining' | 'shedding' | 'not_ready' {
  if (draining) return 'draining';
  if (shedding) return 'shedding';
  return upstreams.every((upstream) => !upstream.required || upstream.state === 'ready') ? 'ready' : 'not_ready';
}

/**
 * Liveness and readiness. Readiness is 503 until config is loaded and every required upstream is up, and
 * while draining. Both are public, so they say nothing else: which upstream is down is for operators
 * (GET /v1/admin/upstreams). Both answer without a token (`security: []` in the document).
 */
const routes: RoutePlugin = async (app) => {
  app.metrics.watchReady(() => readinessOf(app.gateway.status(), app.drain.draining, app.shedding()) === 'ready');
  app.get('/healthz', { schema: { tags: ['operations'], operationId: 'getLiveness', summary: 'Liveness', security: [], response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getReadiness',
        summary: 'Readiness: 503 while a required upstream is down (its details: GET /v1/admin/upstreams)',
        security: [],
        response: {
          200: { $ref: 'Readiness#' },
          503: { $ref: 'Readiness#' },
        },
      },
    },
    async (_request, reply) => {
      // Draining for shutdown: 503 first, so a load balancer stops sending before the listener closes.
      // Shedding load: 503 while it lasts, so the load balancer sends the next requests elsewhere.
      const status = readinessOf(app.gateway.status(), app.drain.draining, app.shedding());
      reply.code(status === 'ready' ? 200 : 503);
      if (status !== 'ready') reply.header('retry-after', status === 'shedding' ? String(app.gateway.config.server.loadShedding.retryAfterSec) : '5');
      return { status };
    },
  );
};

export const healthRoutes = fp(routes, { name: 'toolgate-routes-health', dependencies: ['toolgate-gateway', 'toolgate-load-shedding', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
