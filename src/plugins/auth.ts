import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthenticationError, type Authenticator } from '../auth/authenticator.js';
import { errors } from '../errors.js';
import type { Gateway } from '../gateway.js';
import type { Principal } from '../types.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    requireRole: (...roles: string[]) => (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

const BEARER = /^Bearer ([^\s]+)$/i;

/**
 * Bearer authentication as a preHandler: the principal comes only from a verified token, never from
 * headers, query strings or bodies. Unknown tenants are checked against the live config on every request.
 */
export const authPlugin = fp<{ authenticator: () => Authenticator; gateway: Gateway }>(
  async (app, { authenticator, gateway }) => {
    app.decorateRequest('principal', null as unknown as Principal);

    app.decorate('authenticate', async (request: FastifyRequest, reply: FastifyReply) => {
      const match = BEARER.exec(request.headers.authorization ?? '');
      if (!match) {
        reply.header('www-authenticate', 'Bearer realm="toolgate"');
        throw new errors.TG_UNAUTHENTICATED('missing bearer token');
      }
      let principal: Principal;
      try {
        principal = await authenticator().authenticate(match[1]!);
      } catch (error) {
        if (!(error instanceof AuthenticationError)) throw error;
        reply.header('www-authenticate', `Bearer realm="toolgate", error="invalid_token", error_description="${error.message}"`);
        throw new errors.TG_UNAUTHENTICATED(error.message);
      }
      if (!gateway.tenant(principal.tenant)) throw new errors.TG_UNKNOWN_TENANT();
      request.principal = principal;
    });

    app.decorate('requireRole', (...roles: string[]) => async (request: FastifyRequest) => {
      if (!request.principal.roles.some((role) => roles.includes(role))) {
        throw new errors.TG_FORBIDDEN(`requires role ${roles.join(' or ')}`);
      }
    });
  },
  { name: 'toolgate-auth' },
);
