import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { auditSecurityEvent } from '../src/audit/events.js';
import { errors } from '../src/errors.js';
import { publishUserPoolChanged } from '../src/mcp/server/session-hub.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';
import type { Principal } from '../src/call/principal.js';
import type { UserMcpProvider } from '../src/mcp/user/user-mcp-provider.js';
import { registrationView, type UserMcpRegistrations } from '../src/mcp/user/registrations.js';

export interface UserRoutesOptions {
  registrations: UserMcpRegistrations;
  provider: UserMcpProvider;
}

const userId = { type: 'string', minLength: 1, maxLength: 512 } as const;
// Each route declares exactly the parameters of its path (a generated client types every declared one).
const userParams = { type: 'object', properties: { userId }, required: ['userId'] } as const;
const serverParams = {
  type: 'object',
  properties: { userId, serviceId: { type: 'string', pattern: '^[A-Za-z0-9-]{1,32}$' } },
  required: ['userId', 'serviceId'],
} as const;

const putBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    transport: { type: 'string', enum: ['streamable-http', 'sse'] },
    headers: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 4096 } },
    auth: {
      type: 'object',
      maxProperties: 16,
      description:
        "The user's own OAuth client for this server: `type` userOAuth (the user's own connection, `/v1/connections/{serviceKey}`) or clientCredentials, " +
        '`issuer` or `tokenUrl`, `authorizationUrl`, `revocationUrl`, `clientId`, `clientSecret` (kept sealed, never listed back), `scopes`, `resource`, `audience`. ' +
        'tokenExchange is refused: it would exchange the caller\'s token for one meant for a URL of their choosing. Only the user themself may set it.',
    },
  },
} as const;

const authView = {
  type: 'object',
  description: 'The OAuth client of the server, without its secret',
  properties: {
    type: { type: 'string', enum: ['userOAuth', 'clientCredentials'] },
    issuer: { type: 'string' },
    authorizationUrl: { type: 'string' },
    tokenUrl: { type: 'string' },
    clientId: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    hasClientSecret: { type: 'boolean' },
  },
} as const;

const registration = {
  type: 'object',
  description: 'A registration as listed back: header names only, never their values',
  properties: {
    serviceId: { type: 'string' },
    serviceKey: { type: 'string' },
    url: { type: 'string' },
    transport: { type: 'string', enum: ['streamable-http', 'sse'] },
    headerNames: { type: 'array', items: { type: 'string' } },
    auth: authView,
    createdAt: { type: 'string' },
    era: { type: 'string', enum: ['modern', 'legacy'], description: 'The MCP protocol era the server spoke, while the answering replica holds a connection to it (docs/mcp.md#upstream-eras)' },
  },
} as const;

/**
 * A user's own MCP servers (docs/security-model.md#user-mcp-servers). `:userId` is the raw `sub`, URL-encoded (Fastify decodes
 * it). The tenant always comes from the principal, so no path can reach another tenant; only the
 * user themself or an `admin` of the same tenant may manage the servers.
 */
const routes: RoutePlugin<UserRoutesOptions> = async (app, { registrations, provider }) => {
  function owner(principal: Principal, userId: string): { tenant: string; sub: string } {
    if (principal.user !== userId && !principal.roles.includes('admin')) {
      throw new errors.TG_FORBIDDEN('only the user themself or a tenant admin may manage these MCP servers');
    }
    return { tenant: principal.tenant, sub: userId };
  }
  /** A registration's view with the era of its live connection on this replica, when there is one. */
  function withEra<View extends { serviceId: string }>(tenant: string, sub: string, view: View): View & { era?: string } {
    const era = provider.eraOf(tenant, sub, view.serviceId);
    return era === undefined ? view : { ...view, era };
  }
  const onRequest = [app.authenticate];
  const doc = (operationId: string, summary: string) => ({ tags: ['users'], operationId, summary, security: bearerSecurity });
  const responses = <const Own extends object>(own: Own) => ({ ...own, ...errorResponses, 404: { $ref: 'ErrorBody#' } }) as const;

  app.get(
    '/v1/users/:userId/mcp-servers',
    { onRequest, schema: { ...doc('listUserMcpServers', "List a user's own MCP servers"), params: userParams, response: responses({ 200: { type: 'object', properties: { servers: { type: 'array', items: registration } } } }) } },
    async (request) => {
      const { tenant, sub } = owner(request.principal, request.params.userId);
      return { servers: (await registrations.list(tenant, sub)).map((registration) => withEra(tenant, sub, registrationView(sub, registration))) };
    },
  );

  app.get(
    '/v1/users/:userId/mcp-servers/:serviceId',
    { onRequest, schema: { ...doc('getUserMcpServer', "One of a user's MCP servers"), params: serverParams, response: responses({ 200: registration }) } },
    async (request) => {
      const { tenant, sub } = owner(request.principal, request.params.userId);
      const { serviceId } = request.params;
      const registration = await registrations.get(tenant, sub, serviceId);
      if (!registration) throw new errors.TG_NOT_FOUND(`no MCP server ${serviceId}`);
      return withEra(tenant, sub, registrationView(sub, registration));
    },
  );

  app.put(
    '/v1/users/:userId/mcp-servers/:serviceId',
    {
      onRequest,
      schema: {
        ...doc('putUserMcpServer', 'Register or replace a user MCP server (streamable HTTP or SSE; the URL must pass the egress policy)'),
        params: serverParams,
        body: putBody,
        response: responses({ 200: registration, 201: registration, 409: { $ref: 'ErrorBody#' } }),
      },
    },
    async (request, reply) => {
      const { tenant, sub } = owner(request.principal, request.params.userId);
      const { serviceId } = request.params;
      // The server's OAuth client acts as its owner (their connection, their client): only they may attach one.
      if (request.body.auth !== undefined && request.principal.user !== sub) throw new errors.TG_FORBIDDEN("only the user themself may attach auth to their MCP server");
      const result = await registrations.put(tenant, sub, serviceId, request.body);
      if (!result.ok && result.code === 'TG_EGRESS_DENIED') {
        // The caller hears the one wording; the reason (how the host resolved) goes to the log and the
        // operator-only part of the audit event (docs/security-model.md#egress).
        request.log.warn({ serviceId, reason: result.reason }, 'user MCP server refused by the egress policy');
        auditSecurityEvent(app.audit, request, {
          kind: 'egress_refused',
          outcome: 'refused',
          reason: result.message,
          tenant,
          user: request.principal.user,
          target: `${sub}/${serviceId}`,
          detail: result.reason,
        });
      }
      if (!result.ok) throw new errors[result.code](result.message);
      await provider.forget(tenant, sub, serviceId);
      announcePoolChange(request, tenant, sub);
      // Logged without URL or headers: both are the user's.
      request.log.info({ serviceId, created: result.created }, 'user MCP server registered');
      return reply.code(result.created ? 201 : 200).send(registrationView(sub, result.registration));
    },
  );

  app.delete(
    '/v1/users/:userId/mcp-servers/:serviceId',
    { onRequest, schema: { ...doc('deleteUserMcpServer', 'Remove a user MCP server'), params: serverParams, response: responses({ 204: { type: 'null', description: 'Removed' } }) } },
    async (request, reply) => {
      const { tenant, sub } = owner(request.principal, request.params.userId);
      const { serviceId } = request.params;
      if (!(await registrations.delete(tenant, sub, serviceId))) throw new errors.TG_NOT_FOUND(`no MCP server ${serviceId}`);
      await provider.forget(tenant, sub, serviceId);
      announcePoolChange(request, tenant, sub);
      return reply.code(204).send();
    },
  );
};

/** The user's MCP sessions, on whichever replica holds their streams, recheck their pool (tools/list_changed). */
function announcePoolChange(request: FastifyRequest, tenant: string, user: string): void {
  publishUserPoolChanged(request.server.bus, tenant, user).catch((error: unknown) => request.log.warn({ err: error }, 'pool change not announced to MCP sessions'));
}

export const userRoutes = fp(routes, { name: 'toolgate-routes-users', dependencies: ['toolgate-auth', 'toolgate-store', 'toolgate-audit', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
