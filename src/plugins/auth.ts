import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { isRuntimeKeyToken, type RuntimeKeys } from '../admin/api-keys.js';
import { auditSecurityEvent } from '../audit/events.js';
import { AuthenticationError, type Authenticator } from '../auth/authenticator.js';
import { resourceMetadataUrl } from '../auth/resource-metadata.js';
import { errors } from '../errors.js';
import type { Principal } from '../call/principal.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
    requireRole: (...roles: string[]) => (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** Global operations: only a principal listed in `auth.operators`, whatever its tenant roles. */
    requireOperator: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** A global operator, or a principal holding one of `roles` in its own tenant. */
    requireOperatorOrRole: (...roles: string[]) => (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

const SCHEME = 'bearer ';
const WHITESPACE = /\s/;

/**
 * The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, one space, a token
 * without whitespace), or undefined. Parsed by hand: a regex match allocated an array and a substring on
 * every request.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length <= SCHEME.length) return undefined;
  // The usual spelling first: the case-insensitive compare allocates.
  if (!header.startsWith('Bearer ') && header.slice(0, SCHEME.length).toLowerCase() !== SCHEME) return undefined;
  const token = header.slice(SCHEME.length);
  return WHITESPACE.test(token) ? undefined : token;
}

/**
 * An auth-param value as an RFC 7235 quoted-string, so a message can never end the value early: `"` and
 * `\` are backslash-escaped; anything but tab and printable ASCII is dropped (a header cannot carry it).
 */
export function quotedString(value: string): string {
  return `"${value.replace(/[^\t\x20-\x7e]/g, '').replace(/["\\]/g, '\\$&')}"`;
}

/**
 * Bearer authentication as an onRequest hook (so a request without a valid token is refused before its body
 * is read): the principal comes only from a verified token, never from
 * headers, query strings or bodies. Unknown tenants are checked against the live config on every request.
 */
export const authPlugin = fp<{ authenticator: () => Authenticator; runtimeKeys: RuntimeKeys }>(
  async (app, { authenticator, runtimeKeys }) => {
    const { gateway } = app;
    app.decorateRequest('principal', null as unknown as Principal);

    // With auth.resource set, every 401 says where the protected-resource metadata is (RFC 9728 §5.1), so an
    // MCP client finds the authorization server by itself. From the live config: a reload changes it.
    const challenge = (params: string): string => {
      const resource = gateway.config.auth.resource;
      return `Bearer realm="toolgate"${params}${resource === undefined ? '' : `, resource_metadata=${quotedString(resourceMetadataUrl(resource))}`}`;
    };

    // Every refusal is audited (docs/security-model.md#audited-security-events): the reason is the refusal's
    // own text, never the token; an unknown tenant's name goes to the operator-only detail.
    const { audit } = app;
    const unauthenticated = (request: FastifyRequest, reason: string): Error => {
      auditSecurityEvent(audit, request, { kind: 'auth_refused', outcome: 'refused', reason, tenant: null, user: null });
      return new errors.TG_UNAUTHENTICATED(reason);
    };

    // Callback style, answered synchronously when the token cache knows the token: the common case
    // costs no promise, and no closure either (those are made on the other paths only). Verification (a
    // cache miss) is the only thing that waits.
    app.decorate('authenticate', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined) {
        reply.header('www-authenticate', challenge(''));
        return done(unauthenticated(request, 'missing bearer token'));
      }
      const current = authenticator();
      // Runtime keys (POST /v1/admin/keys) are looked up in the shared store on every request and never
      // cached, so a revocation holds at once on every replica (verify, below).
      const known = isRuntimeKeyToken(token) ? undefined : current.cached(token);
      // A cached token of a tenant compiled already: what `admit` below does for it, without making it.
      if (known && gateway.tenant(known.tenant)) {
        request.principal = known;
        return done();
      }
      verify(request, reply, done, token, current, known);
    });

    /** Every other path: a runtime key, a token not cached (`known` undefined), or a tenant not compiled yet. */
    const verify = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, token: string, current: Authenticator, known: Principal | undefined): void => {
      const admitKnown = (principal: Principal, known: boolean): void => {
        if (!known) {
          auditSecurityEvent(audit, request, { kind: 'unknown_tenant', outcome: 'refused', reason: 'tenant is not configured', tenant: null, user: principal.user, detail: `tenant ${principal.tenant}` });
          return done(new errors.TG_UNKNOWN_TENANT());
        }
        request.principal = principal;
        done();
      };
      // A tenant compiled already answers at once; one not yet (its first request on this replica, or a tenant
      // from the store) is compiled first (docs/architecture.md#tenants-compiled-on-first-use).
      const admit = (principal: Principal): void => {
        if (gateway.tenant(principal.tenant)) return admitKnown(principal, true);
        gateway.loadTenant(principal.tenant).then((view) => admitKnown(principal, view !== undefined), (error: unknown) => done(error as Error));
      };
      const refuse = (error: unknown): void => {
        if (!(error instanceof AuthenticationError)) return done(error as Error);
        reply.header('www-authenticate', challenge(`, error="invalid_token", error_description=${quotedString(error.message)}`));
        done(unauthenticated(request, error.message));
      };
      // A runtime key's miss in the store falls through to the config's keys.
      if (isRuntimeKeyToken(token)) {
        runtimeKeys.verify(token).then((principal) => (principal ? admit(principal) : current.authenticate(token).then(admit, refuse)), (error: unknown) => done(error as Error));
        return;
      }
      if (known) return admit(known);
      current.authenticate(token).then(admit, refuse);
    };

    app.decorate('requireRole', (...roles: string[]) => async (request: FastifyRequest) => {
      if (!request.principal.roles.some((role) => roles.includes(role))) {
        throw new errors.TG_FORBIDDEN(`requires role ${roles.join(' or ')}`);
      }
    });

    app.decorate('requireOperator', async (request: FastifyRequest) => {
      if (request.principal.operator !== true) throw new errors.TG_FORBIDDEN('requires a global operator (auth.operators)');
    });

    app.decorate('requireOperatorOrRole', (...roles: string[]) => async (request: FastifyRequest) => {
      if (request.principal.operator === true) return;
      if (!request.principal.roles.some((role) => roles.includes(role))) throw new errors.TG_FORBIDDEN(`requires role ${roles.join(' or ')} or a global operator`);
    });
  },
  { name: 'toolgate-auth', dependencies: ['toolgate-gateway', 'toolgate-audit'] },
);
