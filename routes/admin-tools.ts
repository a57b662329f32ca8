import fp from 'fastify-plugin';
import { isMcpProvider } from '../src/mcp/client/admin.js';
import { requestMode } from '../src/http/call-options.js';
import { sourcePrecedence } from '../src/registry/catalog.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const entry = {
  type: 'object',
  required: ['name', 'source', 'reason'],
  properties: { name: { type: 'string' }, source: { type: 'string' }, service: { type: 'string' }, reason: { type: 'string' } },
} as const;

/**
 * Why a tool the tenant has is missing from the admin's own pool: refused by the tenant's rules for this
 * caller (deny globs, role, mode), held out by definition pinning, or shadowed by a higher-precedence
 * source. Only tools the caller's tenant reaches are named — never another tenant's or another user's.
 */
const routes: RoutePlugin = async (app) => {
  app.get(
    '/v1/admin/tools',
    {
      onRequest: [app.authenticate, app.requireRole('admin')],
      schema: {
        tags: ['admin'],
        operationId: 'listHeldBackTools',
        summary: "What the caller's tenant has but the caller's pool does not show, and why (tenant admin)",
        security: bearerSecurity,
        response: {
          200: {
            type: 'object',
            required: ['heldBack', 'shadowed'],
            properties: {
              heldBack: { type: 'array', items: entry },
              shadowed: {
                type: 'array',
                items: { type: 'object', properties: { name: { type: 'string' }, winner: { type: 'string' }, loser: { type: 'string' }, loserService: { type: 'string' } } },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { principal } = request;
      const snapshot = app.gateway.current();
      const view = app.gateway.tenant(principal.tenant);
      if (!view) return { heldBack: [], shadowed: [] };
      const mode = requestMode(request);
      const reached = snapshot.catalog.tools.filter((tool) => view.reaches(tool));
      const heldBack = reached.flatMap((tool) => {
        const decision = view.admits(tool, principal, mode);
        return decision.ok ? [] : [{ name: tool.name, source: tool.source, ...(tool.service ? { service: tool.service } : {}), reason: decision.reason }];
      });
      const services = new Set(view.config.mcpServices);
      const reachedServices = new Set(reached.map((tool) => tool.service));
      for (const provider of snapshot.providers.values()) {
        if (!isMcpProvider(provider)) continue;
        for (const held of provider.heldTools()) {
          // A held tool is named only when its service is one the tenant uses (its mcpServices, or a service of a tool it reaches).
          if (!(provider.kind === 'global-mcp' ? services.has(held.service) : reachedServices.has(held.service))) continue;
          heldBack.push({ name: held.name, source: provider.kind, service: held.service, reason: 'definition changed upstream; held until a global operator accepts it (Upstreams)' });
        }
      }
      const admitted = reached.filter((tool) => view.admits(tool, principal, mode).ok);
      const byName = new Map<string, typeof admitted>();
      for (const tool of admitted) byName.set(tool.name, [...(byName.get(tool.name) ?? []), tool]);
      const shadowed = [...byName.values()]
        .filter((tools) => tools.length > 1)
        .flatMap((tools) => {
          const [winner, ...losers] = [...tools].sort((a, b) => sourcePrecedence(a) - sourcePrecedence(b));
          return losers.map((loser) => ({ name: loser.name, winner: winner!.source, loser: loser.source, ...(loser.service ? { loserService: loser.service } : {}) }));
        });
      heldBack.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { heldBack, shadowed };
    },
  );
};

export const adminToolsRoutes = fp(routes, { name: 'toolgate-routes-admin-tools', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
