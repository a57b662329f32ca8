import fp from 'fastify-plugin';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import { taskView } from '../src/tasks/view.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 128 } } } as const;
const notFound = { 404: { $ref: 'ErrorBody#' } } as const;

/**
 * Tasks over REST (docs/api.md#tasks): the records `/v1/execute` with `"async": true` and MCP `tools/call`
 * with `task` create, the caller's own only — another user's or tenant's id answers 404 like an unknown one.
 */
const routes: RoutePlugin = async (app) => {
  const { tasks } = app;
  const ownerOf = (principal: { tenant: string; user: string }) => ({ tenant: principal.tenant, user: principal.user });

  app.get(
    '/v1/tasks',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['execute'],
        operationId: 'listTasks',
        summary: 'Your own live tasks, newest first',
        security: bearerSecurity,
        response: { 200: { type: 'object', required: ['tasks'], properties: { tasks: { type: 'array', items: { $ref: 'Task#' } } } }, ...errorResponses },
      },
    },
    async (request) => ({ tasks: (await tasks.list(ownerOf(request.principal))).map(taskView) }),
  );

  app.get(
    '/v1/tasks/:id',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['execute'],
        operationId: 'getTask',
        summary: 'One of your tasks: its status and, once finished, its ToolResult',
        security: bearerSecurity,
        params: idParams,
        response: { 200: { $ref: 'Task#' }, ...errorResponses, ...notFound },
      },
    },
    async (request) => taskView(await tasks.get(ownerOf(request.principal), request.params.id)),
  );

  app.post(
    '/v1/tasks/:id/cancel',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['execute'],
        operationId: 'cancelTask',
        summary: 'Cancels one of your tasks: its call is stopped, or its pending approval request withdrawn',
        security: bearerSecurity,
        params: idParams,
        response: { 200: { $ref: 'Task#' }, ...errorResponses, ...notFound, 409: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => taskView(await tasks.cancel(ownerOf(request.principal), request.params.id, request.id)),
  );
};

export const tasksRoutes = fp(routes, { name: 'toolgate-routes-tasks', dependencies: ['toolgate-auth', 'toolgate-tasks', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
