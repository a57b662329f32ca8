import fp from 'fastify-plugin';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/** The OpenAPI document generated from the route schemas (the same content as openapi.yaml). */
const routes: RoutePlugin = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};

export const docsRoutes = fp(routes, { name: 'toolgate-routes-docs', dependencies: ['toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
