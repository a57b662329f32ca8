import fp from 'fastify-plugin';
import { errors } from '../src/errors.js';
import { requestMode } from '../src/http/call-options.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';
import { isGatewayTool } from '../src/registry/tenant-view.js';
import type { Principal } from '../src/call/principal.js';

const MAX_ROLES = 64;

/**
 * For a principal the tenant admin chooses (user, roles, claims), which of the tenant's Cedar policies let each
 * tool it reaches through the listing or hold it back (docs/governance.md#cedar-explained). Read-only; the
 * caller's own tenant only; the decisions are the listing's (no arguments), so nothing runs. The gateway's own tools
 * (tool_search, code mode) are not decided by Cedar and not shown.
 */
const routes: RoutePlugin = async (app) => {
  app.get(
    '/v1/admin/tools/cedar',
    {
      onRequest: [app.authenticate, app.requireRole('admin')],
      schema: {
        tags: ['admin'],
        operationId: 'explainCedarListing',
        summary: "Which of the tenant's Cedar policies list or hold back each tool for a chosen principal (tenant admin)",
        security: bearerSecurity,
        querystring: {
          type: 'object',
          properties: {
            user: { type: 'string', minLength: 1, maxLength: 256 },
            roles: { type: 'string', maxLength: 4096, description: 'comma-separated roles' },
            claims: { type: 'string', maxLength: 8192, description: 'the claims as a JSON object' },
          },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            required: ['cedar', 'tools'],
            properties: {
              cedar: { type: 'boolean', description: 'false when the tenant has no Cedar policies' },
              tools: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'listed', 'policies'],
                  properties: { name: { type: 'string' }, listed: { type: 'boolean' }, policies: { type: 'array', items: { type: 'string' } }, error: { type: 'string' } },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const query = request.query as { user?: string; roles?: string; claims?: string };
      const view = app.gateway.tenant(request.principal.tenant);
      const cedar = view?.cedar;
      if (!view || !cedar) return { cedar: false, tools: [] };
      let claims: Record<string, unknown> = {};
      if (query.claims !== undefined) {
        try {
          const parsed: unknown = JSON.parse(query.claims);
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
          claims = parsed as Record<string, unknown>;
        } catch {
          throw new errors.TG_BAD_REQUEST('claims must be a JSON object');
        }
      }
      const roles = (query.roles ?? '').split(',').map((role) => role.trim()).filter(Boolean).slice(0, MAX_ROLES);
      const principal: Principal = { tenant: request.principal.tenant, user: query.user ?? request.principal.user, roles, claims };
      const mode = requestMode(request);
      const tools = app.gateway
        .current()
        .catalog.tools.filter((tool) => view.reaches(tool) && !isGatewayTool(tool))
        .map((tool) => {
          const decision = cedar.listable(principal, tool, mode);
          return { name: tool.name, listed: decision.allowed, policies: [...decision.policies], ...(decision.error ? { error: decision.error } : {}) };
        });
      return { cedar: true, tools };
    },
  );
};

export const adminCedarRoutes = fp(routes, { name: 'toolgate-routes-admin-cedar', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
