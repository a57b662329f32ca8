import type { FastifyPluginAsync } from 'fastify';

/** The OpenAPI document generated from the route schemas (the same content as openapi.yaml). */
export const docsRoutes: FastifyPluginAsync = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
