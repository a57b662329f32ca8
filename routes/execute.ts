import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { executeBatch } from '../src/batch/execute-batch.js';
import { callOptionsFor, defaultCallId, requestCancellation } from '../src/http/call-options.js';
import { bearerSecurity, callArguments, callId, errorResponses, toolHeaders, toolsetName } from '../src/schemas/common.js';
import type { RoutePlugin, Validated } from '../src/schemas/type-provider.js';
import type { ToolResult } from '../src/call/types.js';
import { taskView } from '../src/tasks/view.js';
import { startTask } from '../src/tasks/run.js';

/**
 * HTTP status of a finished call (docs/architecture.md#request-path): 202 waiting for a human, 429 rate-limited
 * or over a budget, else 200. A budget near its limit is also told in headers (docs/governance.md#budgets).
 */
export function sendToolResult(reply: FastifyReply, result: ToolResult): ToolResult {
  if (result.status === 'pending_approval') reply.code(202);
  else if (result.error?.errorType === 'RATE_LIMITED' || result.error?.errorType === 'QUOTA_EXCEEDED') {
    reply.code(429).header('retry-after', String(Math.max(1, Math.ceil((result.retryAfterMs ?? 1000) / 1000))));
  }
  if (result.budget) reply.header('x-toolgate-budget-remaining', String(result.budget.remaining)).header('x-toolgate-budget-reset', result.budget.resetAt);
  return result;
}

const executeBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 256 },
    arguments: callArguments,
    callId,
    step: { type: 'integer', minimum: 0, maximum: 1000000 },
    toolset: toolsetName,
    async: { type: 'boolean', default: false, description: 'Run as a task: answers 202 with the Task at once; `GET /v1/tasks/{taskId}` reads it' },
  },
} as const;
type ExecuteBody = Validated<typeof executeBody>;

/** `"async": true`: the call runs as a task of the caller, detached from this request (docs/api.md#tasks). */
async function startAsync(app: FastifyInstance, request: FastifyRequest<{ Body: ExecuteBody }>) {
  const { body, principal } = request;
  const owner = { tenant: principal.tenant, user: principal.user };
  const callId = body.callId ?? defaultCallId(body.step, 0);
  const { tasks } = app;
  const call = { name: body.name, arguments: body.arguments, callId };
  const { task } = await startTask({
    tasks,
    owner,
    input: { tool: body.name, callId, via: 'rest', requestId: request.id },
    limits: app.gateway.config.mcpServer.tasks,
    slots: app.tenantSlots,
    requestId: request.id,
    drain: app.drain,
    log: request.log,
    execute: (signal) => app.gateway.execute(call, callOptionsFor(request, callId, signal), body.toolset),
  });
  return taskView(task);
}

const routes: RoutePlugin = async (app) => {
  app.post(
    '/v1/execute',
    {
      onRequest: app.authenticate,
      config: { runsCalls: true },
      schema: {
        tags: ['execute'],
        operationId: 'executeTool',
        summary: 'Run one tool call and return a ToolResult',
        security: bearerSecurity,
        headers: toolHeaders,
        body: executeBody,
        response: {
          200: { $ref: 'ToolResult#' },
          202: { description: 'A call waiting for a human (a ToolResult with `status: pending_approval`), or with `async`: the Task', anyOf: [{ $ref: 'ToolResult#' }, { $ref: 'Task#' }] },
          429: { $ref: 'ToolResult#' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.async) return reply.code(202).send(await startAsync(app, request));
      const options = callOptionsFor(request, defaultCallId(body.step, 0), requestCancellation(reply, app.drain));
      const result = await app.gateway.execute({ name: body.name, arguments: body.arguments, callId: body.callId }, options, body.toolset);
      return sendToolResult(reply, result);
    },
  );

  app.post(
    '/v1/execute/batch',
    {
      onRequest: app.authenticate,
      config: { runsCalls: true },
      schema: {
        tags: ['execute'],
        operationId: 'executeBatch',
        summary: 'Run the tool calls of one model turn; results in input order',
        security: bearerSecurity,
        headers: toolHeaders,
        body: {
          type: 'object',
          required: ['calls'],
          additionalProperties: false,
          properties: {
            calls: {
              type: 'array',
              minItems: 1,
              maxItems: 128,
              items: {
                type: 'object',
                required: ['name'],
                additionalProperties: false,
                properties: { name: { type: 'string', maxLength: 256 }, arguments: callArguments, callId },
              },
            },
            step: { type: 'integer', minimum: 0, maximum: 1000000 },
            parallel: { type: 'boolean', default: true },
            maxParallel: { type: 'integer', minimum: 1, maximum: 32, default: 4 },
            timeoutMs: { type: 'integer', minimum: 1, maximum: 3600000 },
            toolset: toolsetName,
          },
        },
        response: {
          200: { type: 'object', required: ['results'], properties: { results: { type: 'array', items: { $ref: 'ToolResult#' } } } },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const signal = requestCancellation(reply, app.drain).signal;
      const { defaultCallId: _unused, ...rest } = callOptionsFor(request, '', signal);
      const options = { ...rest, signal };
      const scope = await app.gateway.scopeFor(
        app.gateway.current(),
        request.principal,
        options.mode,
        request.body.calls.map((call) => call.name),
        request.body.toolset,
      );
      return { results: await executeBatch(request.body, options, scope, app.policyMetrics) };
    },
  );
};

export const executeRoutes = fp(routes, { name: 'toolgate-routes-execute', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-tasks', 'toolgate-policy-deps', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });

