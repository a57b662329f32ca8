import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';

/** The OpenAPI document generated from the route schemas (the same content as openapi.yaml). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};

export const docsRoutes = fp(routes, { name: 'toolgate-routes-docs', dependencies: ['toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
