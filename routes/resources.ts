import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createCatalogGovernance } from '../src/catalog/resource-catalog-governance.js';
import { requestCancellation } from '../src/http/call-options.js';
import {
  getPrompt,
  listPrompts,
  listResources,
  listResourceTemplates,
  readResource,
  type CatalogRequest,
} from '../src/catalog/resource-catalog.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import { promptGetBody, promptGetResponse, promptListResponse, resourceListResponse, resourceReadQuery, resourceReadResponse } from '../src/schemas/resources.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const responses = <T>(ok: T) => ({ 200: ok, ...errorResponses, 404: { $ref: 'ErrorBody#' }, 502: { $ref: 'ErrorBody#' } }) as const;
// A read or get over the tenant's rate limit (policies.rate-limit, which tool calls share).
const limitedResponses = <T>(ok: T) => ({ ...responses(ok), 429: { $ref: 'ErrorBody#' } }) as const;

/**
 * Resources and prompts of the MCP services the caller may reach, over REST: the same catalog as the MCP
 * endpoint's resources/* and prompts/* (docs/architecture.md#resources-and-prompts).
 */
const routes: RoutePlugin = async (app) => {
  const governance = createCatalogGovernance(app.policyDeps);
  const catalogRequest = (request: FastifyRequest, reply: FastifyReply): CatalogRequest => ({
    caller: { principal: request.principal, requestId: request.id, via: 'rest', governance },
    reachable: () => app.gateway.mcpServicesFor(request.principal),
    log: request.log,
    trace: request.traceContext,
    // Upstream requests end when the client goes away or the replica shuts down.
    signal: requestCancellation(reply, app.drain).signal,
  });
  // Unknown and unreachable are one 404, a reachable service that fails a 502, over the tenant's rate limit a
  // 429 + Retry-After: the catalog's errors carry their codes (src/catalog/resource-catalog-errors.ts).
  const common = { onRequest: app.authenticate, config: { runsCalls: true } } as const;

  app.get(
    '/v1/resources',
    {
      ...common,
      schema: { tags: ['resources'], operationId: 'listResources', summary: 'Resources and resource templates of the MCP services the caller may reach', security: bearerSecurity, response: responses(resourceListResponse) },
    },
    async (request, reply) => {
      const catalog = catalogRequest(request, reply);
      const [resources, resourceTemplates] = await Promise.all([listResources(catalog), listResourceTemplates(catalog)]);
      return { resources, resourceTemplates };
    },
  );

  app.get(
    '/v1/resources/read',
    {
      ...common,
      schema: {
        tags: ['resources'],
        operationId: 'readResource',
        summary: 'Read one resource from the MCP service that owns it',
        description: 'A URI of a service the caller cannot reach answers 404 exactly as one that does not exist.',
        security: bearerSecurity,
        querystring: resourceReadQuery,
        response: limitedResponses(resourceReadResponse),
      },
    },
    async (request, reply) => readResource(catalogRequest(request, reply), request.query.uri),
  );

  app.get(
    '/v1/prompts',
    {
      ...common,
      schema: { tags: ['resources'], operationId: 'listPrompts', summary: 'Prompts of the MCP services the caller may reach', security: bearerSecurity, response: responses(promptListResponse) },
    },
    async (request, reply) => ({ prompts: await listPrompts(catalogRequest(request, reply)) }),
  );

  app.post(
    '/v1/prompts/get',
    {
      ...common,
      schema: {
        tags: ['resources'],
        operationId: 'getPrompt',
        summary: 'Get one prompt, filled in with its arguments, from the MCP service that owns it',
        description: 'A name of a service the caller cannot reach answers 404 exactly as one that does not exist.',
        security: bearerSecurity,
        body: promptGetBody,
        response: limitedResponses(promptGetResponse),
      },
    },
    async (request, reply) => getPrompt(catalogRequest(request, reply), request.body.name, request.body.arguments),
  );
};

export const resourcesRoutes = fp(routes, { name: 'toolgate-routes-resources', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
