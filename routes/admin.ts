import fp from 'fastify-plugin';
import { errors } from '../src/errors.js';
import { acceptHeldTool } from '../src/mcp/client/admin.js';
import type { UpstreamStatus } from '../src/registry/tool-provider.js';
import { logReload } from '../src/snapshot/reload.js';
import { BUILTINS_SANDBOX } from '../src/builtins/index.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/**
 * Admin routes. Reload and accepting a changed tool definition act on every tenant, so they need a global
 * operator (`auth.operators`); upstream status is also open to a tenant `admin`, narrowed to its services.
 */
const routes: RoutePlugin = async (app) => {
  const operatorOnly = [app.authenticate, app.requireOperator];
  const operatorOrAdmin = [app.authenticate, app.requireOperatorOrRole('admin')];

  app.post(
    '/v1/admin/reload',
    {
      onRequest: operatorOnly,
      schema: {
        tags: ['admin'],
        operationId: 'reloadConfig',
        summary: 'Reload the configuration file (also on SIGHUP) — a global operator only',
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
      // A config that does not load answers its ConfigError: TG_CONFIG_INVALID with the bad key named.
      const { changed, restartRequired } = await app.reloadConfig();
      logReload(request.log, { changed, restartRequired });
      return { reloaded: true, changed, restartRequired };
    },
  );

  app.get(
    '/v1/admin/upstreams',
    {
      onRequest: operatorOrAdmin,
      schema: {
        tags: ['admin'],
        operationId: 'listUpstreams',
        summary: "State of the upstreams: all of them to a global operator, those the caller's tenant uses to a tenant admin",
        security: bearerSecurity,
        response: { 200: { type: 'object', properties: { upstreams: { type: 'array', items: { type: 'object', additionalProperties: true } } } }, ...errorResponses },
      },
    },
    async (request) => {
      // Breaker state as this replica sees it (circuits are per process and tenant), beside each upstream's own
      // state: a tenant admin sees its tenant's circuit, a global operator the worst of every tenant's.
      const circuits = app.policyDeps.circuits;
      const tenant = request.principal.operator === true ? undefined : request.principal.tenant;
      const withCircuit = (upstream: UpstreamStatus) => ({ ...upstream, circuit: circuits?.stateOf(upstream.service, tenant) ?? 'closed' });
      // The built-ins' sandbox is an upstream only where built-ins are on: for an operator, in some tenant.
      const usesBuiltins = (view: { builtins: 'all' | readonly string[] }): boolean => view.builtins === 'all' || view.builtins.length > 0;
      const isSandbox = (upstream: UpstreamStatus): boolean => upstream.service === BUILTINS_SANDBOX;
      if (request.principal.operator === true) {
        const anyBuiltins = Object.values(app.gateway.config.tenants).some(usesBuiltins);
        return { upstreams: app.gateway.status().filter((upstream) => anyBuiltins || !isSandbox(upstream)).map(withCircuit) };
      }
      // Roles are per tenant: an admin sees global MCP services only when its tenant may reach them, an
      // imported OpenAPI document only when its tenant is admitted to one of the document's tools, and the
      // built-ins' sandbox only when its tenant enables built-ins.
      const view = app.gateway.tenant(request.principal.tenant);
      const allowed = new Set(view?.config.mcpServices ?? []);
      const tools = app.gateway.current().catalog.tools;
      const reaches = (upstream: UpstreamStatus): boolean => {
        if (upstream.kind === 'global-mcp') return allowed.has(upstream.service);
        if (upstream.kind === 'openapi') return view !== undefined && tools.some((tool) => tool.service === upstream.service && view.admits(tool, request.principal, 'default').ok);
        if (isSandbox(upstream)) return view !== undefined && usesBuiltins(view.config);
        return true;
      };
      return { upstreams: app.gateway.status(request.principal.tenant).filter(reaches).map(withCircuit) };
    },
  );

  app.post(
    '/v1/admin/tools/:name/accept',
    {
      onRequest: operatorOnly,
      schema: {
        tags: ['admin'],
        operationId: 'acceptToolDefinition',
        summary: 'Accept the changed definition of an MCP tool held out by pinning — a global operator only',
        security: bearerSecurity,
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 256 } } },
        response: {
          200: { type: 'object', properties: { accepted: { type: 'boolean' }, name: { type: 'string' }, service: { type: 'string' } } },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      // Pins are shared by every tenant: accepting a definition changes what all of them see.
      const held = await acceptHeldTool(app.gateway.current().providers.values(), request.params.name);
      if (held) {
        request.log.warn({ tool: request.params.name, service: held.service }, 'changed MCP tool definition accepted by an operator');
        return { accepted: true, name: request.params.name, service: held.service };
      }
      throw new errors.TG_NOT_FOUND(`no held tool named ${request.params.name}`);
    },
  );
};

export const adminRoutes = fp(routes, { name: 'toolgate-routes-admin', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-policy-deps', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
