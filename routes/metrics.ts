import type { FastifyPluginAsync } from 'fastify';

/** Prometheus text exposition. */
export const metricsRoutes: FastifyPluginAsync = async (app) => {
  app.get('/metrics', { schema: { tags: ['operations'], summary: 'Prometheus metrics', produces: ['text/plain'], response: { 200: { type: 'string' } } } }, async (_request, reply) => {
    reply.header('content-type', app.metrics.registry.contentType);
    return app.metrics.registry.metrics();
  });
};
