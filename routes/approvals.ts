import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { isApprover } from '../src/approvals/service.js';
import { resumeApproved } from '../src/approvals/resume.js';
import { auditedDecision } from '../src/approvals/decision-audit.js';
import { pageOf } from '../src/approvals/page.js';
import { approvalView as view, LISTED_ARGUMENTS_BYTES, listedApprovalView } from '../src/approvals/view.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { Principal } from '../src/call/principal.js';
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
    argumentsBytes: { type: 'integer', description: 'In a listing: size of the larger of `arguments` and `modelArguments` as UTF-8 JSON' },
    argumentsSha256: {
      type: 'string',
      description: `Present instead of \`arguments\` and \`modelArguments\` when they exceed ${LISTED_ARGUMENTS_BYTES} bytes: SHA-256 (hex) of \`arguments\` as JSON. In a listing always; \`GET /v1/approvals/{id}\` has them whole until the call is decided, after which only this summary is kept`,
    },
    argumentsPreview: { type: 'string', description: 'With argumentsSha256: the first 512 characters of `arguments` as JSON' },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time' },
    decidedBy: { type: 'string' },
    decidedAt: { type: 'string', format: 'date-time' },
    result: { $ref: 'ToolResult#' },
  },
} as const;

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

const conflict = { 404: { $ref: 'ErrorBody#' }, 409: { $ref: 'ErrorBody#' } } as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 128 } } } as const;

/** Human approval (docs/architecture.md#human-approval): approvers are role approver/admin of the same tenant, never the requester. */
const routes: RoutePlugin = async (app) => {
  const { approvals, audit } = app;

  /** Decided (newest first) or all (oldest first) records still kept, the viewer's own unless an approver. */
  const decidedPage = async (principal: Principal, status: 'decided' | 'all', limit: number, cursor: string | undefined) => {
    const records = await approvals.list(principal.tenant);
    const visible = isApprover(principal, principal.tenant) ? records : records.filter((record) => record.requester.user === principal.user);
    const wanted = status === 'decided' ? visible.filter((record) => record.status !== 'pending') : visible;
    return pageOf(wanted, (record) => ({ at: record.createdAt, id: record.id }), status === 'decided' ? 'descending' : 'ascending', limit, cursor);
  };

  app.get(
    '/v1/approvals',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['approvals'],
        operationId: 'listApprovals',
        summary: 'Approvals (pending by default; decided ones while kept): every one of the tenant for approvers, your own otherwise. One page at a time; ETag / If-None-Match for polling',
        description:
          '`pending`: soonest to expire first; `all` oldest first; `decided` newest first; `limit` per page; `nextCursor`, when present, fetches the next page. Large arguments are listed by size, SHA-256 and a preview; `GET /v1/approvals/{id}` has them whole.',
        security: bearerSecurity,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: ['pending', 'decided', 'all'], default: 'pending' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: 'Approvals per page' },
            cursor: { type: 'string', maxLength: 200, description: "The previous page's `nextCursor`" },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['approvals'],
            properties: {
              approvals: { type: 'array', items: approval },
              nextCursor: { type: 'string', description: 'Present when more approvals follow: pass it as `cursor`' },
            },
          },
          304: { description: 'Unchanged since the ETag sent in If-None-Match', type: 'null' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { principal } = request;
      const { status, limit, cursor } = request.query;
      const approver = isApprover(principal, principal.tenant);
      const page = status === 'pending' ? await approvals.pendingPage(principal.tenant, { limit, ...(cursor ? { cursor } : {}), ...(approver ? {} : { requester: principal.user }) }) : await decidedPage(principal, status, limit, cursor);
      const body = JSON.stringify({ approvals: page.items.map(listedApprovalView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
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
      await app.tasks.approvalDecided(record);
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
      await app.tasks.approvalDecided(record);
      return view(record);
    },
  );
};

export const approvalsRoutes = fp(routes, { name: 'toolgate-routes-approvals', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-audit', 'toolgate-approvals', 'toolgate-tasks', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
