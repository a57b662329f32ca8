import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { errors } from '../src/errors.js';
import { connectionCompleted } from '../src/mcp/server/url-elicitation.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';
import { CLIENT_METADATA_PATH, clientMetadataDocument } from '../src/upstream-auth/client-metadata.js';
import { FlowError } from '../src/upstream-auth/connections.js';
import type { UpstreamIdentity } from '../src/upstream-auth/identity.js';

// A configured service id or OpenAPI name, or a user's own server (`user_<userKey>_service_<serviceId>`).
const serviceParams = { type: 'object', required: ['service'], properties: { service: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,100}$' } } } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

const connection = {
  type: 'object',
  required: ['service', 'connected', 'scopes', 'expiresAt', 'connectedAt'],
  properties: { service: { type: 'string' }, connected: { type: 'boolean' }, scopes: { type: 'array', items: { type: 'string' } }, expiresAt: nullableTime, connectedAt: nullableTime },
} as const;

const connectedUser = {
  type: 'object',
  required: ['service', 'user', 'connectedAt', 'expiresAt'],
  properties: { service: { type: 'string' }, user: { type: 'string' }, connectedAt: { type: 'string' }, expiresAt: nullableTime },
} as const;

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The page's one stylesheet, allowed by its hash: the page's CSP still refuses everything else. */
const PAGE_STYLE = [
  ':root{color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",sans-serif}',
  'body{margin:0;min-height:100vh;display:grid;place-items:center;background:Canvas;color:CanvasText}',
  'main{max-width:28rem;margin:1.5rem;padding:2rem;border:1px solid color-mix(in srgb,CanvasText 15%,transparent);border-radius:12px;text-align:center}',
  'h1{font-size:1.4rem;margin:0 0 .75rem}h1::before{content:"\\2713";display:block;font-size:2rem;color:#1a7f37;margin-bottom:.5rem}',
  'p{line-height:1.5;margin:.5rem 0}a{color:LinkText}',
].join('');
const PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(PAGE_STYLE).digest('base64')}'; frame-ancestors 'none'`;

/** The callback's answer: a fixed page (the browser that completed the flow shows it), never a redirect to anywhere a request names. */
function page(title: string, text: string, consoleEnabled: boolean): string {
  const link = consoleEnabled ? '<p><a href="/console/">Back to the console</a></p>' : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${link}</main></body></html>`;
}

/**
 * A user's connections to userOAuth services (docs/security-model.md#upstream-identity): list, connect
 * (→ the authorization URL of a flow bound to the caller), disconnect; the OAuth callback that completes a
 * flow; and, for a tenant's admins, who in their tenant is connected. No route ever answers a token.
 */
const routes: RoutePlugin<{ identity: UpstreamIdentity }> = async (app, { identity }) => {
  const { connections } = identity;

  app.get(
    '/v1/connections',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['connections'],
        operationId: 'listConnections',
        summary: "The caller's services that act as the user (userOAuth), each connected or not; never a token",
        security: bearerSecurity,
        response: { 200: { type: 'object', required: ['connections'], properties: { connections: { type: 'array', items: connection } } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { connections: await connections.list(request.principal) };
    },
  );

  app.post(
    '/v1/connections/:service',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['connections'],
        operationId: 'startConnection',
        summary: 'Starts connecting the caller to a service: the authorization URL of a flow bound to the caller (single use, 10 minutes)',
        security: bearerSecurity,
        params: serviceParams,
        response: {
          200: { type: 'object', required: ['authorizationUrl', 'expiresAt'], properties: { authorizationUrl: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } } },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { service } = request.params;
      if (!app.gateway.config.server.publicUrl || !(await connectionsOf(identity, request.principal)).includes(service)) {
        throw new errors.TG_NOT_FOUND(`no service "${service}" takes connections`);
      }
      reply.header('cache-control', 'no-store');
      return connections.start(request.principal, service);
    },
  );

  app.delete(
    '/v1/connections/:service',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['connections'],
        operationId: 'deleteConnection',
        summary: "Forgets the caller's connection to a service and revokes its token at the authorization server (RFC 7009) where offered",
        security: bearerSecurity,
        params: serviceParams,
        response: { 200: { type: 'object', required: ['removed', 'revoked'], properties: { removed: { type: 'boolean' }, revoked: { type: 'boolean' } } }, ...errorResponses },
      },
    },
    async (request) => {
      const { service } = request.params;
      if (!(await connectionsOf(identity, request.principal)).includes(service)) throw new errors.TG_NOT_FOUND(`no service "${service}" takes connections`);
      return connections.remove(request.principal, service);
    },
  );

  app.get(
    '/v1/admin/connections',
    {
      onRequest: [app.authenticate, app.requireRole('admin')],
      schema: {
        tags: ['admin'],
        operationId: 'listTenantConnections',
        summary: "Who in the caller's tenant is connected to which service (admins); never a token",
        security: bearerSecurity,
        response: { 200: { type: 'object', required: ['connections'], properties: { connections: { type: 'array', items: connectedUser } } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { connections: await connections.connectedUsers(request.principal.tenant) };
    },
  );

  app.get(
    '/oauth/callback',
    {
      schema: {
        tags: ['connections'],
        operationId: 'completeConnection',
        summary: "The OAuth redirect URI (<server.publicUrl>/oauth/callback): completes the flow its `state` names, for the user who started it",
        security: [],
        querystring: { type: 'object', additionalProperties: { type: 'string', maxLength: 4096 }, properties: { state: { type: 'string' }, code: { type: 'string' }, error: { type: 'string' } } },
        response: { 200: { type: 'string' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      const query = new URLSearchParams(request.query as Record<string, string>);
      let owner: Awaited<ReturnType<typeof connections.complete>>;
      try {
        owner = await connections.complete(query);
      } catch (error) {
        if (error instanceof FlowError) request.log.info({ reason: error.code }, 'OAuth callback refused');
        throw error;
      }
      const { service } = owner;
      // MCP sessions sent a URL elicitation for this connection hear that it completed; the connection stands either way.
      await connectionCompleted(app.store, app.bus, owner).catch((error: unknown) => request.log.warn({ err: error }, 'URL elicitation completion not sent'));
      reply.header('content-security-policy', PAGE_CSP).type('text/html; charset=utf-8');
      return page('Connected', `Your account is connected to ${service}. You can close this window.`, app.gateway.config.console.enabled);
    },
  );
};

/**
 * toolgate's OAuth Client ID Metadata Document, at the URL that is its client id where an authorization server
 * accepts one (docs/security-model.md#client-id-metadata-document). Public: an authorization server fetches
 * it without credentials. Built from the live `server.publicUrl`, never from the request's Host.
 */
const clientMetadataRoutes: RoutePlugin = async (app) => {
  app.get(
    CLIENT_METADATA_PATH,
    {
      schema: {
        tags: ['connections'],
        operationId: 'getClientMetadataDocument',
        summary: "toolgate's OAuth Client ID Metadata Document (its client id at authorization servers that accept one); 404 without server.publicUrl",
        security: [],
        response: {
          200: {
            type: 'object',
            required: ['client_id', 'client_name', 'redirect_uris', 'grant_types', 'response_types', 'token_endpoint_auth_method'],
            properties: {
              client_id: { type: 'string' },
              client_name: { type: 'string' },
              client_uri: { type: 'string' },
              redirect_uris: { type: 'array', items: { type: 'string' } },
              grant_types: { type: 'array', items: { type: 'string' } },
              response_types: { type: 'array', items: { type: 'string' } },
              token_endpoint_auth_method: { type: 'string' },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (_request, reply) => {
      const { publicUrl } = app.gateway.config.server;
      if (publicUrl === undefined) throw new errors.TG_NOT_FOUND('server.publicUrl is not configured');
      reply.header('cache-control', 'public, max-age=300');
      return clientMetadataDocument(publicUrl);
    },
  );
};

async function connectionsOf(identity: UpstreamIdentity, owner: { tenant: string; user: string }): Promise<string[]> {
  return (await identity.targets(owner)).map((target) => target.service);
}

export const clientMetadataDocumentRoutes = fp(clientMetadataRoutes, { name: 'toolgate-routes-client-metadata', dependencies: ['toolgate-gateway', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });

export const connectionRoutes = fp(routes, { name: 'toolgate-routes-connections', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-store', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
