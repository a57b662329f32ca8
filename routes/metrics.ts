import fp from 'fastify-plugin';
import { bearerToken } from '../src/plugins/auth.js';
import { errors } from '../src/errors.js';
import { metricsTokenMatches } from '../src/observability/metrics-server.js';
import { bearerSecurity } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/**
 * Prometheus text on the API port — only with `metrics.token` set, and only to a caller presenting it
 * (the figures cover every tenant). Without a token metrics are on the metrics listener alone.
 */
const routes: RoutePlugin = async (app) => {
  app.get(
    '/metrics',
    {
      onRequest: (request, reply, done) => {
        const expected = app.gateway.config.metrics.token;
        if (expected === undefined) return done(new errors.TG_NOT_FOUND('metrics are served on the metrics listener (metrics.host, metrics.port), or here with metrics.token'));
        if (!metricsTokenMatches(bearerToken(request.headers.authorization), expected)) {
          reply.header('www-authenticate', 'Bearer realm="toolgate-metrics"');
          return done(new errors.TG_UNAUTHENTICATED('metrics need the metrics token'));
        }
        done();
      },
      schema: {
        tags: ['operations'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics, with the metrics token (metrics.token); by default on the metrics listener instead',
        produces: ['text/plain'],
        security: bearerSecurity,
        response: { 200: { type: 'string' }, 401: { $ref: 'ErrorBody#' }, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (_request, reply) => {
      reply.header('content-type', app.metrics.registry.contentType);
      return app.metrics.registry.metrics();
    },
  );
};

export const metricsRoutes = fp(routes, { name: 'toolgate-routes-metrics', dependencies: ['toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
