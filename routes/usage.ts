import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { tenantBudgets, tenantUsage, userUsage } from '../src/budgets/usage.js';
import { errors } from '../src/errors.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import { adminBudgetUsage, budgetUsage } from '../src/schemas/usage.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const userView = {
  type: 'object',
  required: ['tenant', 'user', 'budgets'],
  properties: { tenant: { type: 'string' }, user: { type: 'string' }, budgets: { type: 'array', items: budgetUsage } },
} as const;

const userQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { user: { type: 'string', minLength: 1, maxLength: 256, description: "A user's `sub`: the caller's own (any other answers 404, as a user without usage would), or any user of the tenant for its admin" } },
} as const;

/** The live config of the caller's tenant (compiled now if it was not yet). */
async function tenantConfig(app: FastifyInstance, tenant: string) {
  const view = await app.gateway.loadTenant(tenant);
  if (!view) throw new errors.TG_NOT_FOUND('no such tenant');
  return view.config;
}

/** Budget usage (docs/api.md#usage, docs/governance.md#budgets): a caller's own, and a tenant admin's view of its tenant. */
const routes: RoutePlugin = async (app) => {
  const { store } = app;

  app.get(
    '/v1/usage',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['usage'],
        operationId: 'getUsage',
        summary: "The caller's budgets: used, left and when each resets",
        security: bearerSecurity,
        querystring: userQuery,
        response: { 200: userView, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { principal } = request;
      const asked = request.query.user;
      // Another user's usage is the admin's to read: anyone else hears exactly what a user without usage would.
      if (asked !== undefined && asked !== principal.user && !principal.roles.includes('admin')) throw new errors.TG_NOT_FOUND('no usage for this user');
      const own = asked === undefined || asked === principal.user;
      const target = own ? principal : { tenant: principal.tenant, user: asked, roles: [], claims: {} };
      const compiled = tenantBudgets(await tenantConfig(app, principal.tenant));
      reply.header('cache-control', 'no-store');
      return { tenant: principal.tenant, user: target.user, budgets: await userUsage(store, compiled, target, Date.now(), own) };
    },
  );

  app.get(
    '/v1/admin/usage',
    {
      onRequest: [app.authenticate, app.requireRole('admin')],
      schema: {
        tags: ['admin', 'usage'],
        operationId: 'getTenantUsage',
        summary: "A tenant admin's view of its tenant's budgets: tenant-wide usage, top users and top tools per budget",
        security: bearerSecurity,
        response: {
          200: {
            type: 'object',
            required: ['tenant', 'budgets'],
            properties: {
              tenant: { type: 'string' },
              budgets: { type: 'array', items: adminBudgetUsage },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { tenant } = request.principal;
      const compiled = tenantBudgets(await tenantConfig(app, tenant));
      reply.header('cache-control', 'no-store');
      return { tenant, budgets: await tenantUsage(store, compiled, tenant, Date.now()) };
    },
  );
};

export const usageRoutes = fp(routes, { name: 'toolgate-routes-usage', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-store', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
