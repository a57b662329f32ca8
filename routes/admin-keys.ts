import fp from 'fastify-plugin';
import type { RuntimeKeys } from '../src/admin/api-keys.js';
import { auditSecurityEvent } from '../src/audit/events.js';
import { errors } from '../src/errors.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const keyView = {
  type: 'object',
  required: ['id', 'user', 'roles', 'createdAt', 'createdBy', 'expiresAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string' },
    user: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
    createdBy: { type: 'string' },
    expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'When the key stops working; null: until revoked (or until a credential that minted it goes)' },
    lastUsedAt: { type: ['string', 'null'], description: 'Last use, written at most once a minute per replica' },
  },
} as const;

const USER = '^[A-Za-z0-9._@-]{1,128}$';
const ROLE = '^[A-Za-z0-9_.-]{1,64}$';

/**
 * Runtime API keys of the caller's tenant (tenant admins only). The tenant always comes from the caller's
 * token; a key can carry only roles the creator holds, roles the tenant's config names, or `approver`, and it
 * works only while the credential that minted it does (docs/security-model.md#runtime-keys).
 */
const routes: RoutePlugin<{ runtimeKeys: RuntimeKeys }> = async (app, { runtimeKeys }) => {
  const adminOnly = [app.authenticate, app.requireRole('admin')];

  app.post(
    '/v1/admin/keys',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['admin'],
        operationId: 'createApiKey',
        summary: "Create a runtime API key in the caller's tenant — the key is in this answer only",
        security: bearerSecurity,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['user'],
          properties: {
            user: { type: 'string', pattern: USER, description: 'The user (sub) the key acts as, inside the caller’s tenant' },
            roles: { type: 'array', maxItems: 16, items: { type: 'string', pattern: ROLE }, default: [] },
            expiresInSec: { type: 'integer', minimum: 60, maximum: 31_536_000, description: 'Lifetime in seconds (at most a year); without it the key lives until revoked' },
          },
        },
        response: {
          201: { type: 'object', required: ['key', 'apiKey'], properties: { key: { type: 'string', description: 'Shown once; only its SHA-256 is stored' }, apiKey: keyView } },
          ...errorResponses,
          409: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request, reply) => {
      const { principal } = request;
      const tenantRoles = Object.keys(app.gateway.tenant(principal.tenant)?.config.roles ?? {});
      const grantable = new Set([...principal.roles, ...tenantRoles, 'approver']);
      const roles = request.body.roles ?? [];
      const refused = roles.filter((role) => !grantable.has(role));
      if (refused.length > 0) throw new errors.TG_FORBIDDEN(`cannot grant role ${refused.join(', ')}: not held by you nor named in the tenant's roles`);
      const { expiresInSec } = request.body;
      const { key, record } = await runtimeKeys.create(principal, { user: request.body.user, roles, ...(expiresInSec === undefined ? {} : { expiresInSec }) });
      request.log.info({ keyId: record.id, keyUser: record.user, roles: record.roles }, 'runtime API key created');
      const lifetime = record.expiresAt === null ? 'until revoked' : `until ${record.expiresAt}`;
      auditSecurityEvent(app.audit, request, {
        kind: 'key_created',
        outcome: 'ok',
        reason: `key for user ${record.user} with roles [${record.roles.join(', ')}], ${lifetime}`,
        tenant: principal.tenant,
        user: principal.user,
        target: record.id,
      });
      return reply.code(201).header('cache-control', 'no-store').send({ key, apiKey: record });
    },
  );

  app.get(
    '/v1/admin/keys',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['admin'],
        operationId: 'listApiKeys',
        summary: "The runtime API keys of the caller's tenant (never the keys themselves)",
        security: bearerSecurity,
        response: { 200: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: keyView } } }, ...errorResponses },
      },
    },
    async (request) => ({ keys: await runtimeKeys.list(request.principal.tenant) }),
  );

  app.delete(
    '/v1/admin/keys/:id',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['admin'],
        operationId: 'revokeApiKey',
        summary: 'Revoke a runtime API key and every key minted with it: refused from the next request on, on every replica',
        security: bearerSecurity,
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (request, reply) => {
      // Another tenant's key id is looked up under the caller's tenant and answers 404, like an unknown one.
      const below = await runtimeKeys.revoke(request.principal.tenant, request.params.id);
      request.log.info({ keyId: request.params.id, alsoRevoked: below }, 'runtime API key revoked');
      auditSecurityEvent(app.audit, request, {
        kind: 'key_revoked',
        outcome: 'ok',
        reason: below.length === 0 ? 'revoked' : `revoked with the ${below.length} key(s) minted below it: ${below.join(', ')}`,
        tenant: request.principal.tenant,
        user: request.principal.user,
        target: request.params.id,
      });
      return reply.code(204).send();
    },
  );
};

export const adminKeysRoutes = fp(routes, { name: 'toolgate-routes-admin-keys', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-audit', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
