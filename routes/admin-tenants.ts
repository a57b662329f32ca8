import fp from 'fastify-plugin';
import { acceptYamlBodies, YAML_MEDIA_TYPE } from '../src/http/yaml-body.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import { conditionalHeaders, tenantConfigBody, tenantDocument, tenantIdParams, tenantList, tenantListQuery } from '../src/schemas/tenants.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';
import type { TenantAnswer, TenantCaller, TenantService } from '../src/tenants/service.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

const conflictResponses = { 404: { $ref: 'ErrorBody#' }, 409: { $ref: 'ErrorBody#' }, 412: { $ref: 'ErrorBody#' } } as const;

/**
 * The tenant API (docs/api.md#tenants): tenants as data, kept in the state store. The list is a global
 * operator's; one tenant is also its own `admin`'s, to read and (with `tenancy.tenantAdmins: narrow`) to
 * narrow. src/tenants/service.ts decides who may do what.
 */
const routes: RoutePlugin<{ tenants: TenantService }> = async (app, { tenants }) => {
  const operatorOnly = [app.authenticate, app.requireOperator];
  const operatorOrAdmin = [app.authenticate, app.requireOperatorOrRole('admin')];
  // JSON Merge Patch bodies (RFC 7396), parsed like JSON (prototype poisoning refused).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, parseJson);
  // A tenant's configuration may also be sent as it stands in the file (the console's YAML editor).
  acceptYamlBodies(app);

  const caller = (request: FastifyRequest): TenantCaller => ({ principal: request.principal, request });
  const answer = (reply: FastifyReply, { tenant, etag }: TenantAnswer) => {
    void reply.header('etag', etag).header('cache-control', 'no-store');
    return tenant;
  };

  app.get(
    '/v1/admin/tenants',
    {
      onRequest: operatorOnly,
      schema: {
        tags: ['admin'],
        operationId: 'listTenants',
        summary: 'Tenant ids, from the file and the state store, one page at a time — a global operator only',
        security: bearerSecurity,
        querystring: tenantListQuery,
        response: { 200: tenantList, ...errorResponses },
      },
    },
    async (request) => tenants.list(request.query),
  );

  app.get(
    '/v1/admin/tenants/:tenant',
    {
      onRequest: operatorOrAdmin,
      schema: {
        tags: ['admin'],
        operationId: 'getTenant',
        summary: "One tenant's configuration with its ETag — a global operator, or the tenant's own admin",
        security: bearerSecurity,
        params: tenantIdParams,
        response: { 200: tenantDocument, ...errorResponses, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (request, reply) => answer(reply, await tenants.get(caller(request), request.params.tenant)),
  );

  app.put(
    '/v1/admin/tenants/:tenant',
    {
      onRequest: operatorOrAdmin,
      schema: {
        tags: ['admin'],
        operationId: 'putTenant',
        summary: 'Create (201) or replace (200) a tenant of the state store; `If-None-Match: *` creates only, `If-Match` replaces only that version',
        security: bearerSecurity,
        params: tenantIdParams,
        headers: conditionalHeaders,
        consumes: ['application/json', YAML_MEDIA_TYPE],
        body: tenantConfigBody,
        response: { 200: tenantDocument, 201: tenantDocument, ...errorResponses, ...conflictResponses },
      },
    },
    async (request, reply) => {
      const { tenant } = request.params;
      const result = await tenants.put(caller(request), tenant, request.body, { ifMatch: request.headers['if-match'], ifNoneMatch: request.headers['if-none-match'] });
      if (result.created) void reply.code(201).header('location', `/v1/admin/tenants/${tenant}`);
      return answer(reply, result);
    },
  );

  app.patch(
    '/v1/admin/tenants/:tenant',
    {
      onRequest: operatorOrAdmin,
      schema: {
        tags: ['admin'],
        operationId: 'patchTenant',
        summary: 'Change a tenant of the state store by JSON Merge Patch (`application/merge-patch+json`, RFC 7396); `If-Match` changes only that version',
        security: bearerSecurity,
        params: tenantIdParams,
        headers: conditionalHeaders,
        consumes: ['application/merge-patch+json', 'application/json'],
        body: { type: 'object', additionalProperties: true, description: 'A JSON Merge Patch of the tenant configuration: `null` removes a key' },
        response: { 200: tenantDocument, ...errorResponses, ...conflictResponses },
      },
    },
    async (request, reply) => answer(reply, await tenants.patch(caller(request), request.params.tenant, request.body, { ifMatch: request.headers['if-match'] })),
  );

  app.delete(
    '/v1/admin/tenants/:tenant',
    {
      onRequest: operatorOrAdmin,
      schema: {
        tags: ['admin'],
        operationId: 'deleteTenant',
        summary: "Delete a tenant of the state store — a global operator only; its tokens are refused from then on, on every replica",
        security: bearerSecurity,
        params: tenantIdParams,
        headers: conditionalHeaders,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses, ...conflictResponses },
      },
    },
    async (request, reply) => {
      await tenants.delete(caller(request), request.params.tenant, { ifMatch: request.headers['if-match'] });
      return reply.code(204).send();
    },
  );
};

export const adminTenantsRoutes = fp(routes, { name: 'toolgate-routes-admin-tenants', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-store', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
