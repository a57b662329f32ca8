import type { FastifyPluginAsync } from 'fastify';
import { ConfigError } from '../src/config/load.js';
import { errors } from '../src/errors.js';
import { acceptHeldTool } from '../src/mcp/admin.js';
import { logReload } from '../src/plugins/gateway.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';

/** Operator routes: config reload and upstream status — role `admin`. */
export const adminRoutes: FastifyPluginAsync = async (app) => {
  const adminOnly = [app.authenticate, app.requireRole('admin')];

  app.post(
    '/v1/admin/reload',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['admin'],
        summary: 'Reload the configuration file (also on SIGHUP)',
        security: bearerSecurity,
        response: {
          200: {
            type: 'object',
            required: ['reloaded', 'changed', 'restartRequired'],
            properties: {
              reloaded: { type: 'boolean' },
              changed: { type: 'boolean' },
              restartRequired: {
                type: 'array',
                items: { type: 'string' },
                description: 'Changed settings that are read only at start-up (e.g. `egress.allow`, `audit`): they apply after a restart',
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      try {
        const { changed, restartRequired } = await app.reloadConfig();
        logReload(request.log, { changed, restartRequired });
        return { reloaded: true, changed, restartRequired };
      } catch (error) {
        if (error instanceof ConfigError) throw new errors.TG_CONFIG_INVALID(error.message);
        throw error;
      }
    },
  );

  app.get(
    '/v1/admin/upstreams',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['admin'],
        summary: "State of the upstreams the caller's tenant uses",
        security: bearerSecurity,
        response: { 200: { type: 'object', properties: { upstreams: { type: 'array', items: { type: 'object', additionalProperties: true } } } }, ...errorResponses },
      },
    },
    async (request) => {
      // Roles are per tenant: an admin sees global MCP services only when its tenant may reach them.
      const allowed = new Set(app.gateway.tenant(request.principal.tenant)?.config.mcpServices ?? []);
      return { upstreams: app.gateway.status().filter((upstream) => upstream.kind !== 'global-mcp' || allowed.has(upstream.service)) };
    },
  );

  app.post<{ Params: { name: string } }>(
    '/v1/admin/tools/:name/accept',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['admin'],
        summary: 'Accept the changed definition of an MCP tool held out by pinning',
        security: bearerSecurity,
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 256 } } },
        response: {
          200: { type: 'object', properties: { accepted: { type: 'boolean' }, name: { type: 'string' }, service: { type: 'string' } } },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const tenant = app.gateway.tenant(request.principal.tenant);
      // A tenant admin may accept global tools only of services its tenant can reach.
      const outcome = acceptHeldTool(app.gateway.current().providers.values(), request.params.name, (held, provider) =>
        provider.kind !== 'global-mcp' || (tenant?.config.mcpServices.includes(held.service) ?? false),
      );
      if (outcome.ok) {
        request.log.warn({ tool: request.params.name, service: outcome.held.service }, 'changed MCP tool definition accepted by admin');
        return { accepted: true, name: request.params.name, service: outcome.held.service };
      }
      if (outcome.reason === 'forbidden') throw new errors.TG_FORBIDDEN('the tool belongs to an MCP service this tenant cannot use');
      throw new errors.TG_NOT_FOUND(`no held tool named ${request.params.name}`);
    },
  );
};
