import fp from 'fastify-plugin';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/**
 * The OpenAPI document generated from the route schemas (the same content as openapi.yaml), and `GET /`: a
 * pointer to the browsable docs and the console for whoever opens the bare address.
 */
const routes: RoutePlugin = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/', { schema: { hide: true } }, async () => ({
    name: 'toolgate',
    docs: '/docs',
    openapi: '/openapi.json',
    ...(app.gateway.config.console.enabled ? { console: '/console/' } : {}),
    health: '/healthz',
  }));
};

export const docsRoutes = fp(routes, { name: 'toolgate-routes-docs', dependencies: ['toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
