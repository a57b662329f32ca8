import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { isApprover } from '../src/approvals/service.js';
import { resumeApproved } from '../src/approvals/resume.js';
import { auditedDecision } from '../src/approvals/decision-audit.js';
import type { ApprovalRecord } from '../src/approvals/types.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

const approval = {
  type: 'object',
  required: ['id', 'status', 'tenant', 'requester', 'tool', 'callId', 'createdAt', 'expiresAt'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'approved', 'denied', 'expired'] },
    tenant: { type: 'string' },
    requester: { type: 'string' },
    tool: { type: 'string' },
    callId: { type: 'string' },
    arguments: { type: 'object', additionalProperties: true, description: 'The call as it will run, server-side bindings applied' },
    modelArguments: { type: 'object', additionalProperties: true, description: 'The arguments as the model sent them (bound keys are overwritten before the call runs)' },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time' },
    decidedBy: { type: 'string' },
    decidedAt: { type: 'string', format: 'date-time' },
    result: { $ref: 'ToolResult#' },
  },
} as const;

const conflict = { 404: { $ref: 'ErrorBody#' }, 409: { $ref: 'ErrorBody#' } } as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 128 } } } as const;

/** The public view of a record: the requester's claims stay server-side. */
function view(record: ApprovalRecord) {
  return {
    id: record.id,
    status: record.status,
    tenant: record.tenant,
    requester: record.requester.user,
    tool: record.call.name,
    callId: record.call.callId,
    arguments: record.call.boundArguments ?? record.call.arguments,
    modelArguments: record.call.arguments,
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
    ...(record.decidedBy ? { decidedBy: record.decidedBy } : {}),
    ...(record.decidedAt ? { decidedAt: new Date(record.decidedAt).toISOString() } : {}),
    ...(record.result ? { result: record.result } : {}),
  };
}

/** Human approval (docs/architecture.md#human-approval): approvers are role approver/admin of the same tenant, never the requester. */
const routes: RoutePlugin = async (app) => {
  const { approvals, audit } = app.governance;

  app.get(
    '/v1/approvals',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['approvals'],
        operationId: 'listApprovals',
        summary: 'Approvals (pending by default; decided ones while kept): every one of the tenant for approvers, your own otherwise. ETag / If-None-Match for polling',
        security: bearerSecurity,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { status: { type: 'string', enum: ['pending', 'decided', 'all'], default: 'pending' } },
        },
        response: {
          200: { type: 'object', required: ['approvals'], properties: { approvals: { type: 'array', items: approval } } },
          304: { description: 'Unchanged since the ETag sent in If-None-Match', type: 'null' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { principal } = request;
      const { status } = request.query;
      const records = status === 'pending' ? await approvals.listPending(principal.tenant) : await approvals.list(principal.tenant);
      const wanted = status === 'decided' ? records.filter((record) => record.status !== 'pending').reverse() : records;
      const visible = isApprover(principal, principal.tenant) ? wanted : wanted.filter((record) => record.requester.user === principal.user);
      const body = JSON.stringify({ approvals: visible.map(view) });
      // Polling clients (the console's inbox) send the ETag back and get 304 while nothing changed.
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
      reply.header('etag', etag).header('cache-control', 'private, no-cache').header('vary', 'Authorization');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.get(
    '/v1/approvals/:id',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['approvals'],
        operationId: 'getApproval',
        summary: 'One approval and, once decided, its ToolResult (requester or approvers only)',
        security: bearerSecurity,
        params: idParams,
        response: { 200: approval, ...errorResponses, ...conflict },
      },
    },
    async (request) => view(await approvals.get(request.params.id, request.principal)),
  );

  app.post(
    '/v1/approvals/:id/approve',
    {
      // The approver check is the service's (the role, the same tenant, never the requester), so a refused
      // attempt reaches the handler and is audited like a decision.
      onRequest: app.authenticate,
      schema: {
        tags: ['approvals'],
        operationId: 'approveCall',
        summary: 'Approve: runs the call once, as its requester, and stores its ToolResult',
        security: bearerSecurity,
        params: idParams,
        response: { 200: approval, ...errorResponses, ...conflict },
      },
    },
    async (request) => {
      const meta = { requestId: request.id, log: request.log, drain: app.drain, trace: request.traceContext };
      const decision = { decision: 'approve', approvalId: request.params.id, decider: request.principal, requestId: request.id } as const;
      const decide = () => approvals.approve(request.params.id, request.principal, (record) => resumeApproved(app.gateway, record, meta));
      const record = await auditedDecision(audit, decision, decide);
      // A task waiting for this approval (docs/mcp.md#tasks) moves on now, and its session hears it.
      await app.governance.tasks.approvalDecided(record);
      return view(record);
    },
  );

  app.post(
    '/v1/approvals/:id/deny',
    {
      // The approver check is the service's (the role, the same tenant, never the requester), so a refused
      // attempt reaches the handler and is audited like a decision.
      onRequest: app.authenticate,
      schema: {
        tags: ['approvals'],
        operationId: 'denyCall',
        summary: 'Deny: the call never runs; its result is APPROVAL_DENIED',
        security: bearerSecurity,
        params: idParams,
        body: { anyOf: [{ type: 'object', additionalProperties: false, properties: { reason: { type: 'string', maxLength: 500 } } }, { type: 'null' }] },
        response: { 200: approval, ...errorResponses, ...conflict },
      },
    },
    async (request) => {
      const decision = { decision: 'deny', approvalId: request.params.id, decider: request.principal, requestId: request.id } as const;
      const record = await auditedDecision(audit, decision, () => approvals.deny(request.params.id, request.principal, request.body?.reason));
      await app.governance.tasks.approvalDecided(record);
      return view(record);
    },
  );
};

export const approvalsRoutes = fp(routes, { name: 'toolgate-routes-approvals', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-governance', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
