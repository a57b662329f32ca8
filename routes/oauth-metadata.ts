import fp from 'fastify-plugin';
import { protectedResourceMetadata, RESOURCE_METADATA_PATH } from '../src/auth/resource-metadata.js';
import { errors } from '../src/errors.js';
import { toolsetName } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const metadataSchema = {
  description: 'RFC 9728 protected-resource metadata',
  type: 'object',
  required: ['resource', 'bearer_methods_supported'],
  properties: {
    resource: { type: 'string' },
    authorization_servers: { type: 'array', items: { type: 'string' } },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    bearer_methods_supported: { type: 'array', items: { type: 'string' } },
    resource_name: { type: 'string' },
  },
} as const;

/**
 * OAuth discovery for MCP clients (the MCP authorization spec): where to get a token for toolgate. Served
 * at the root and at the path-suffixed forms MCP clients try first for `/mcp` and `/mcp/<toolset>` — the
 * same document everywhere (one resource, one audience), whatever the toolset name, so it tells an
 * anonymous caller nothing about any tenant. Read from the live config.
 */
const routes: RoutePlugin = async (app) => {
  const routes = [
    { url: RESOURCE_METADATA_PATH, operationId: 'getProtectedResourceMetadata' },
    { url: `${RESOURCE_METADATA_PATH}/mcp`, operationId: 'getMcpProtectedResourceMetadata' },
    { url: `${RESOURCE_METADATA_PATH}/mcp/:toolset`, operationId: 'getToolsetProtectedResourceMetadata' },
  ];
  for (const { url, operationId } of routes) {
    app.get(
      url,
      {
        schema: {
          tags: ['operations'],
          operationId,
          summary: 'OAuth protected-resource metadata (RFC 9728): the authorization servers that issue tokens for toolgate',
          security: [],
          ...(url.endsWith(':toolset') ? { params: { type: 'object', required: ['toolset'], properties: { toolset: toolsetName } } } : {}),
          response: { 200: metadataSchema, 400: { $ref: 'ErrorBody#' }, 404: { $ref: 'ErrorBody#' } },
        },
      },
      async (_request, reply) => {
        const metadata = protectedResourceMetadata(app.gateway.config.auth);
        if (!metadata) throw new errors.TG_NOT_FOUND('OAuth protected-resource metadata is not configured (auth.resource)');
        // Public by design, and read by browser-based MCP clients from another origin.
        reply.header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=60');
        return metadata;
      },
    );
  }
};

export const oauthMetadataRoutes = fp(routes, { name: 'toolgate-routes-oauth-metadata', dependencies: ['toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
