import fp from 'fastify-plugin';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/** Who the bearer is, as the server sees it (the console shows only what these roles allow). */
const routes: RoutePlugin = async (app) => {
  app.get(
    '/v1/me',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['auth'],
        operationId: 'getMe',
        summary: 'The verified principal of the bearer token: tenant, user, roles, operator',
        security: bearerSecurity,
        response: {
          200: {
            type: 'object',
            required: ['tenant', 'user', 'roles', 'operator'],
            properties: { tenant: { type: 'string' }, user: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } }, operator: { type: 'boolean' } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { tenant, user, roles, operator } = request.principal;
      reply.header('cache-control', 'no-store');
      return { tenant, user, roles, operator: operator === true };
    },
  );
};

export const meRoutes = fp(routes, { name: 'toolgate-routes-me', dependencies: ['toolgate-auth', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
