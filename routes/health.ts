import type { FastifyPluginAsync } from 'fastify';

/**
 * Liveness and readiness. Readiness is 503 until config is loaded and every required upstream is up, and
 * while draining. Both are public, so they say nothing else: which upstream is down is for operators
 * (GET /v1/admin/upstreams). Both answer without a token (`security: []` in the document).
 */
export const healthRoutes: FastifyPluginAsync = async (app) => {
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
      const upstreams = app.gateway.status();
      // Draining for shutdown: 503 first, so a load balancer stops sending before the listener closes.
      const draining = app.drain.draining;
      const ready = !draining && upstreams.every((upstream) => !upstream.required || upstream.state === 'ready');
      reply.code(ready ? 200 : 503);
      if (!ready) reply.header('retry-after', '5');
      return { status: ready ? 'ready' : draining ? 'draining' : 'not_ready' };
    },
  );
};
