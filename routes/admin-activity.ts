import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import type { FastifyRequest } from 'fastify';
import { errors } from '../src/errors.js';
import { STATS_MINUTES } from '../src/admin/stats.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';
import { CATALOG_ERROR_TYPES, SECURITY_EVENT_KINDS } from '../src/audit/types.js';
import { verifyRecentCopy } from '../src/audit/verify-copy.js';
import { canonicalJson } from '../src/shared/canonical-json.js';
import { boundedName } from '../src/audit/events.js';
import { ERROR_TYPES } from '../src/call/types.js';

/** How long a repeated read of the audit (same reader, tenant and filter) writes no second audit_read line. */
const AUDIT_READ_COALESCE_MS = 60_000;

// The audit line as the sink writes it (call events, approval decisions, resource reads and prompt gets,
// security events, task status changes, relayed upstream requests, budget warnings; see docs/governance.md#the-audit-log,
// docs/security-model.md#audited-security-events and docs/mcp.md#tasks).
const auditEvent = {
  type: 'object',
  additionalProperties: true,
  properties: {
    event: { type: 'string', enum: ['call', 'approval', 'resource_read', 'prompt_get', 'security', 'task', 'relay', 'audit_read', 'budget'] },
    time: { type: 'integer', description: 'epoch ms' },
    requestId: { type: 'string' },
    tenant: { type: 'string' },
    user: { type: 'string', description: 'audit_read events: the reader, or `operator` for a global operator reading another tenant' },
    tool: { type: ['string', 'null'], description: 'call and approval events' },
    name: { type: 'string', description: 'resource_read and prompt_get events: the namespaced URI or prompt name' },
    service: { type: ['string', 'null'], description: 'resource_read and prompt_get events: `<scope>/<service>` of the owning service' },
    kind: { type: 'string', enum: [...SECURITY_EVENT_KINDS, 'elicitation', 'sampling', 'warn'], description: 'security events: what happened; relay events: what the upstream asked for; budget events: `warn`' },
    budget: { type: 'string', description: 'budget events: the budget whose warn threshold was crossed (docs/governance.md#budgets)' },
    taskId: { type: 'string', description: 'task events: the task' },
    from: { type: ['string', 'null'], description: 'task events: the status before (null when created)' },
    clientAddress: { type: 'string', description: 'security events: the client address' },
    reason: { type: 'string', description: 'security events: why (the refusal, or what was changed)' },
    target: { type: ['string', 'null'], description: 'security events: the key id or user MCP service concerned' },
    outcome: { type: 'string' },
    errorType: { type: ['string', 'null'] },
    durationMs: { type: 'number' },
    via: { type: 'string', description: 'audit_read events: `list` or `verify`; resource_read and prompt_get events: `mcp` or `rest`' },
    filter: { type: 'object', additionalProperties: true, description: 'audit_read events: the filters the reader sent' },
    chain: { type: 'string', description: 'with audit.chain on: the hash chain (replica instance, and the tenant)' },
    seq: { type: 'integer', description: 'with audit.chain on: the position in its chain, from 1' },
    prev: { type: ['string', 'null'], description: "with audit.chain on: SHA-256 of the chain's previous event (null for the first)" },
    guardrails: {
      type: 'array',
      description: 'call events: what the guardrails found and did (docs/governance.md#guardrails), never the matched text',
      items: {
        type: 'object',
        required: ['direction', 'detector', 'action', 'count'],
        properties: {
          direction: { type: 'string', enum: ['arguments', 'result'] },
          detector: { type: 'string' },
          action: { type: 'string', enum: ['mask', 'hash', 'block', 'flag', 'truncate', 'pass'] },
          count: { type: 'integer' },
          score: { type: 'number' },
        },
      },
    },
  },
} as const;

const numbers = { type: 'array', items: { type: 'number' } } as const;

const copyReport = {
  type: 'object',
  required: ['tenant', 'ok', 'events', 'unchained', 'chains', 'breaks'],
  properties: {
    tenant: { type: 'string' },
    ok: { type: 'boolean', description: 'No break in any chain of the copy' },
    events: { type: 'integer', description: 'Chained events checked' },
    unchained: { type: 'integer', description: 'Kept events without chain fields (written while audit.chain was off)' },
    chains: {
      type: 'array',
      items: { type: 'object', properties: { chain: { type: 'string' }, events: { type: 'integer' }, firstSeq: { type: 'integer' }, lastSeq: { type: 'integer' } } },
    },
    breaks: {
      type: 'array',
      items: { type: 'object', properties: { chain: { type: 'string' }, kind: { type: 'string', enum: ['edited', 'removed', 'inserted', 'signature-bad', 'unknown-key'] }, seq: { type: 'integer' }, message: { type: 'string' } } },
    },
    checkpoints: {
      type: 'object',
      description: "With audit.chain.checkpoints {sink: store}: the tenant's newest stored checkpoints (at most 256) checked, how many verify with a configured key, and how many sign an event the copy holds unchanged",
      properties: { checked: { type: 'integer' }, valid: { type: 'integer' }, matched: { type: 'integer' } },
    },
  },
} as const;

const tenantQuery = { type: 'string', minLength: 1, maxLength: 128, description: "Another tenant's id: a global operator only (a tenant admin reads its own tenant)" } as const;

/**
 * What a tenant admin reads about its own tenant: recent audit events and the per-minute rollup. A global
 * operator reads any configured tenant's (`?tenant=`, its own by default).
 */
const routes: RoutePlugin = async (app) => {
  const adminOrOperator = [app.authenticate, app.requireOperatorOrRole('admin')];
  const { recentAudit, callStats: stats, audit, storedCheckpoints } = app;
  // Reading the audit is itself audited, in the chain of the tenant that was read.
  // One line per reader, tenant read and filter a minute (per replica): the console's Audit page reads every
  // 5 s, and a line per poll would push the events it shows out of the bounded recent copy.
  const recentReads = new LRUCache<string, true>({ max: 10_000, ttl: AUDIT_READ_COALESCE_MS });
  const auditRead = (request: FastifyRequest, tenant: string, via: 'list' | 'verify', filter: Record<string, string | number>): void => {
    if (audit.enabled === false) return;
    const { principal } = request;
    const readKey = canonicalJson([tenant, principal.tenant, principal.user, via, filter]);
    if (recentReads.has(readKey)) return;
    recentReads.set(readKey, true);
    // A global operator reading another tenant: that tenant learns an operator read it, not who elsewhere.
    const own = principal.tenant === tenant;
    const user = own ? principal.user : 'operator';
    audit.write({ event: 'audit_read', time: Date.now(), requestId: request.id, tenant, user, via, filter, outcome: 'ok', ...(own ? {} : { detail: `tenant ${boundedName(principal.tenant)}, user ${boundedName(principal.user)}` }) });
  };
  // Roles are per tenant: only a global operator may name a tenant other than its own.
  // A tenant of the file or of the state store (compiled now if it was not yet).
  const tenantOf = async (request: FastifyRequest, asked: string | undefined): Promise<string> => {
    const own = request.principal.tenant;
    if (asked === undefined || asked === own) return own;
    if (request.principal.operator !== true) throw new errors.TG_FORBIDDEN('only a global operator (auth.operators) may read another tenant');
    if (!(await app.gateway.loadTenant(asked))) throw new errors.TG_NOT_FOUND('no such tenant');
    return asked;
  };

  app.get(
    '/v1/admin/audit',
    {
      onRequest: adminOrOperator,
      schema: {
        tags: ['admin'],
        operationId: 'listAuditEvents',
        summary: "Recent audit events of the caller's tenant, newest first (a bounded copy; the audit sink is the system of record)",
        security: bearerSecurity,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            user: { type: 'string', minLength: 1, maxLength: 256 },
            tool: { type: 'string', minLength: 1, maxLength: 256 },
            outcome: { type: 'string', enum: [...new Set(['ok', 'pending_approval', 'cancelled', 'refused', ...ERROR_TYPES, ...CATALOG_ERROR_TYPES])] },
            since: { type: 'string', format: 'date-time', description: 'Events at or after this time' },
            until: { type: 'string', format: 'date-time', description: 'Events at or before this time (the next older page: the time of the last event shown)' },
            tenant: tenantQuery,
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        },
        response: { 200: { type: 'object', required: ['events'], properties: { events: { type: 'array', items: auditEvent } } }, ...errorResponses },
      },
    },
    async (request) => {
      const { since, until, tenant, ...filters } = request.query;
      const scope = await tenantOf(request, tenant);
      const events = await recentAudit.query(scope, { ...filters, ...(since ? { since: Date.parse(since) } : {}), ...(until ? { until: Date.parse(until) } : {}) });
      const { tenant: _scope, ...asked } = request.query;
      const filter = Object.fromEntries(Object.entries(asked).filter((entry): entry is [string, string | number] => entry[1] !== undefined));
      auditRead(request, scope, 'list', filter);
      return { events };
    },
  );

  app.get(
    '/v1/admin/audit/verify',
    {
      onRequest: adminOrOperator,
      schema: {
        tags: ['admin'],
        operationId: 'verifyAuditCopy',
        summary: "Checks the hash-chain links of the recent audit copy of the caller's tenant, and with checkpoints in the state store their newest signatures against it (the full log: `toolgate audit verify`)",
        security: bearerSecurity,
        querystring: { type: 'object', additionalProperties: false, properties: { tenant: tenantQuery } },
        response: { 200: copyReport, ...errorResponses },
      },
    },
    async (request, reply) => {
      const scope = await tenantOf(request, request.query.tenant);
      const [events, checkpoints] = await Promise.all([recentAudit.all(scope), storedCheckpoints?.(scope)]);
      const report = verifyRecentCopy(events, checkpoints);
      auditRead(request, scope, 'verify', {});
      reply.header('cache-control', 'no-store');
      return { tenant: scope, ...report };
    },
  );

  app.get(
    '/v1/admin/stats',
    {
      onRequest: adminOrOperator,
      schema: {
        tags: ['admin'],
        operationId: 'getToolStats',
        summary: `Calls that ended (ran or refused), errors and p95 latency per tool and minute over the last ${STATS_MINUTES} minutes (this replica, the caller's tenant)`,
        security: bearerSecurity,
        querystring: { type: 'object', additionalProperties: false, properties: { tenant: tenantQuery } },
        response: {
          200: {
            type: 'object',
            required: ['minutes', 'total', 'tools'],
            properties: {
              minutes: { type: 'array', items: { type: 'string', format: 'date-time' } },
              total: { type: 'object', properties: { calls: numbers, errors: numbers } },
              tools: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { tool: { type: 'string' }, calls: numbers, errors: numbers, p95Ms: { type: 'array', items: { type: ['number', 'null'] } } },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return stats.view(await tenantOf(request, request.query.tenant));
    },
  );
};

export const adminActivityRoutes = fp(routes, { name: 'toolgate-routes-admin-activity', dependencies: ['toolgate-auth', 'toolgate-audit', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
