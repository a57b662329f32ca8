import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { errors } from '../src/errors.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { UserMcpProvider } from '../src/user-mcp/provider.js';
import { registrationView, type UserMcpRegistrations } from '../src/user-mcp/registrations.js';

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
    createdAt: { type: 'string' },
  },
} as const;

/**
 * A user's own MCP servers (CONTRACT §5). `:userId` is the raw `sub`, URL-encoded (Fastify decodes
 * it). The tenant always comes from the principal, so no path can reach another tenant; only the
 * user themself or an `admin` of the same tenant may manage the servers.
 */
const routes: FastifyPluginAsyncTypebox<UserRoutesOptions> = async (app, { registrations, provider }) => {
  function owner(request: FastifyRequest): { tenant: string; sub: string } {
    const { userId } = request.params as { userId: string };
    const principal = request.principal;
    if (principal.user !== userId && !principal.roles.includes('admin')) {
      throw new errors.TG_FORBIDDEN('only the user themself or a tenant admin may manage these MCP servers');
    }
    return { tenant: principal.tenant, sub: userId };
  }
  const route = (operationId: string, summary: string, params: object, response: Record<number, unknown>, body?: object) => ({
    onRequest: [app.authenticate],
    schema: { tags: ['users'], operationId, summary, security: bearerSecurity, params, ...(body ? { body } : {}), response: { ...response, ...errorResponses, 404: { $ref: 'ErrorBody#' } } },
  });

  app.get('/v1/users/:userId/mcp-servers', route('listUserMcpServers', "List a user's own MCP servers", userParams, { 200: { type: 'object', properties: { servers: { type: 'array', items: registration } } } }), async (request) => {
    const { tenant, sub } = owner(request);
    return { servers: (await registrations.list(tenant, sub)).map((registration) => registrationView(sub, registration)) };
  });

  app.get('/v1/users/:userId/mcp-servers/:serviceId', route('getUserMcpServer', "One of a user's MCP servers", serverParams, { 200: registration }), async (request) => {
    const { tenant, sub } = owner(request);
    const { serviceId } = request.params as { serviceId: string };
    const registration = await registrations.get(tenant, sub, serviceId);
    if (!registration) throw new errors.TG_NOT_FOUND(`no MCP server ${serviceId}`);
    return registrationView(sub, registration);
  });

  app.put('/v1/users/:userId/mcp-servers/:serviceId', route('putUserMcpServer', 'Register or replace a user MCP server (streamable HTTP or SSE; the URL must pass the egress policy)', serverParams, { 200: registration, 201: registration, 409: { $ref: 'ErrorBody#' } }, putBody), async (request, reply) => {
    const { tenant, sub } = owner(request);
    const { serviceId } = request.params as { serviceId: string };
    const result = await registrations.put(tenant, sub, serviceId, request.body as { url: string });
    if (!result.ok) throw new errors[result.code](result.message);
    await provider.forget(tenant, sub, serviceId);
    // Logged without URL or headers: both are the user's.
    request.log.info({ serviceId, created: result.created }, 'user MCP server registered');
    return reply.code(result.created ? 201 : 200).send(registrationView(sub, result.registration));
  });

  app.delete('/v1/users/:userId/mcp-servers/:serviceId', route('deleteUserMcpServer', 'Remove a user MCP server', serverParams, { 204: { type: 'null', description: 'Removed' } }), async (request, reply) => {
    const { tenant, sub } = owner(request);
    const { serviceId } = request.params as { serviceId: string };
    if (!(await registrations.delete(tenant, sub, serviceId))) throw new errors.TG_NOT_FOUND(`no MCP server ${serviceId}`);
    await provider.forget(tenant, sub, serviceId);
    return reply.code(204).send();
  });
};

export const userRoutes = fp(routes, { name: 'toolgate-routes-users', dependencies: ['toolgate-auth', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
