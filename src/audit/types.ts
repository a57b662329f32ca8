import type { GuardrailEvent } from './guardrail-events.js';
import type { ErrorType, ToolSourceKind } from '../call/types.js';
import type { UpstreamCredentialKind } from '../call/upstream-credential.js';

/**
 * A call's outcome: `ok`, `pending_approval`, `cancelled` (its caller gave up on it: the client hung up or
 * cancelled; its errorType stays what the call answered, e.g. TIMEOUT), or its errorType.
 */
export type CallOutcome = 'ok' | 'pending_approval' | 'cancelled' | ErrorType;

/**
 * One tool call, whatever answered it: the policy chain, or a refusal before it (UNKNOWN_TOOL at
 * resolution, PERMISSION_DENIED outside the pool, VALIDATION_ERROR). Never carries raw arguments: only
 * their canonical SHA-256 (null when they were not a JSON object).
 */
export interface CallAuditEvent {
  event: 'call';
  /** When the call started, epoch ms (as the log lines' `time`). */
  time: number;
  requestId: string;
  callId: string;
  tenant: string;
  user: string;
  /** The resolved tool's name, or the name as the caller sent it (bounded, see boundedName). */
  tool: string;
  source: ToolSourceKind | null;
  argsSha256: string | null;
  outcome: CallOutcome;
  errorType: ErrorType | null;
  durationMs: number;
  approvalId: string | null;
  /** The call's OpenTelemetry trace id, present only while tracing is on (joins the event to its trace). */
  traceId?: string;
  /** Which upstream identity the call carried (a service with `auth`): its kind and SHA-256 prefix, never the token. */
  credential?: { kind: UpstreamCredentialKind; tokenHash: string };
  /** Set on a call a code-mode script made: the script's id and the `run_script` call that ran it. */
  scriptId?: string;
  parentCallId?: string;
  /** The tenant's Cedar decision of the call and its determining policy ids (operator-only: never in the caller's answer). */
  cedar?: { decision: 'allow' | 'deny'; policies: readonly string[]; error?: string };
  /** What the guardrails found and did (docs/governance.md#guardrails): kinds, actions, counts; never the matched text. */
  guardrails?: readonly GuardrailEvent[];
}

/**
 * One approval decision (approve or deny), refused attempts included. An approval runs the call: its
 * outcome is the run's (the run writes no call event of its own, so a decision is one line).
 */
export interface ApprovalAuditEvent {
  event: 'approval';
  time: number;
  requestId: string;
  tenant: string;
  /** Who decided (or tried to). */
  user: string;
  decision: 'approve' | 'deny';
  approvalId: string;
  /** Known once the record was found and the decider may see it. */
  requester: string | null;
  tool: string | null;
  callId: string | null;
  source: ToolSourceKind | null;
  /** The approved run's outcome, `APPROVAL_DENIED` for a denial, `refused` when the decision was not taken. */
  outcome: CallOutcome | 'refused';
  /** The errorType of the outcome, or the request-level code (`TG_CONFLICT`, …) of a refused decision. */
  errorType: string | null;
  durationMs: number;
}

/**
 * How a resource read or prompt get ended: `ok`; `UNKNOWN_RESOURCE` / `UNKNOWN_PROMPT` for a name that is
 * not in a service the caller reaches (or not namespaced at all); `PERMISSION_DENIED` for a name of a
 * service it reaches that the tenant's `resources` / `prompts` globs refuse; `VALIDATION_ERROR` for params
 * refused before any lookup (a `uri` or `name` that is not a string); `RATE_LIMITED`;
 * `UPSTREAM_ERROR` when the owning service failed; `INTERNAL_ERROR` for anything else. The caller hears
 * the first three alike (not found).
 */
export const CATALOG_ERROR_TYPES = ['UNKNOWN_RESOURCE', 'UNKNOWN_PROMPT', 'PERMISSION_DENIED', 'VALIDATION_ERROR', 'RATE_LIMITED', 'UPSTREAM_ERROR', 'INTERNAL_ERROR'] as const;
export type CatalogErrorType = (typeof CATALOG_ERROR_TYPES)[number];

/**
 * One resources/read or prompts/get (over /mcp or REST) that got past authentication and admission. Records
 * the namespaced URI or prompt name, never contents, and of prompt arguments only the SHA-256 of their
 * canonical JSON (values may be secrets).
 */
export interface CatalogAuditEvent {
  event: 'resource_read' | 'prompt_get';
  time: number;
  requestId: string;
  tenant: string;
  user: string;
  /** The wire it came in on. */
  via: 'mcp' | 'rest';
  /** The namespaced URI or prompt name as the caller sent it (bounded, see boundedName). */
  name: string;
  /** `<scope>/<service>` of the owning service once the name resolved to one the caller reaches, else null. */
  service: string | null;
  /** prompts/get: SHA-256 of the canonical arguments (`{}` when none were sent); resources/read: null. */
  argsSha256: string | null;
  outcome: 'ok' | CatalogErrorType;
  errorType: CatalogErrorType | null;
  durationMs: number;
  traceId?: string;
}

/**
 * What a security event records (docs/security-model.md#audited-security-events): a refused token (401), a
 * token of a tenant that is not configured (403), a runtime key created or revoked, a user MCP registration
 * the egress policy refused, a tenant created, changed or deleted through the tenant API.
 */
export const SECURITY_EVENT_KINDS = ['auth_refused', 'unknown_tenant', 'key_created', 'key_revoked', 'egress_refused', 'tenant_created', 'tenant_changed', 'tenant_deleted'] as const;
export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number];

/**
 * One security-relevant event outside the tool calls. Never token material: the reason is the refusal's own
 * text (e.g. `token expired`), never the token or a part of it.
 */
export interface SecurityAuditEvent {
  event: 'security';
  time: number;
  requestId: string;
  kind: SecurityEventKind;
  /** The caller's tenant; null while it is not known to be a configured tenant (a refused token, an unknown tenant). */
  tenant: string | null;
  /** The caller's user (subject); null for a refused token. */
  user: string | null;
  /** The client's address as toolgate sees it (`server.trustProxy` decides whether a proxy's header counts). */
  clientAddress: string;
  /** `refused` for a refusal, `ok` for a change that was made. */
  outcome: 'refused' | 'ok';
  /** Why, in words a tenant's admin may read: the refusal's message, or what was changed. */
  reason: string;
  /** What it concerned, when there is one: a key id, a user's MCP service id. */
  target: string | null;
  /**
   * For the operator only (the audit sink; never the copy tenant admins read): what the caller was not told,
   * e.g. how the egress check saw the host, or the tenant an unknown-tenant token named.
   */
  detail?: string;
  traceId?: string;
}

/**
 * One change of a task's status (docs/mcp.md#tasks), written once by the replica whose store write made
 * it. The call itself keeps its own `call` line; an approval its `approval` line.
 */
export interface TaskAuditEvent {
  event: 'task';
  time: number;
  requestId: string;
  tenant: string;
  user: string;
  taskId: string;
  tool: string;
  callId: string;
  /** The status before (null when the task was created). */
  from: string | null;
  /** The status after: `working`, `input_required`, `completed`, `failed` or `cancelled`. */
  outcome: string;
  approvalId: string | null;
}

/**
 * One request an upstream MCP server sent back while serving a call (elicitation or sampling), relayed to
 * the caller's MCP session or refused. Never its content.
 */
export interface RelayAuditEvent {
  event: 'relay';
  time: number;
  requestId: string;
  tenant: string;
  user: string;
  kind: 'elicitation' | 'sampling';
  /** The upstream service (`global/<id>`, `local/<service>`, `user`). */
  service: string;
  callId: string;
  /** `relayed` (the client answered), `refused` (policy, capability, bounds) or `failed` (the client's error or no answer in time). */
  outcome: 'relayed' | 'refused' | 'failed';
  reason: string | null;
  durationMs: number;
}

/**
 * A read of the audit itself (GET /v1/admin/audit, the console's audit page, GET /v1/admin/audit/verify):
 * who read which tenant's events with which filter. Written into the chain of the tenant that was read.
 */
export interface AuditReadEvent {
  event: 'audit_read';
  time: number;
  requestId: string;
  /** The tenant whose events were read. */
  tenant: string;
  /**
   * Who read them: the reader's user within its own tenant, or `operator` for a global operator reading
   * another tenant (which tenant and user that is stays in `detail`, which tenant admins never read).
   */
  user: string;
  via: 'list' | 'verify';
  /** The query's filters as sent (user, tool, outcome, since, until, limit). */
  filter: Record<string, string | number>;
  outcome: 'ok';
  /** Operator-only: the tenant and user of a global operator who read another tenant's events. */
  detail?: string;
}

/**
 * A budget crossing its warn threshold (docs/governance.md#budgets), written once per budget counter and
 * period by the replica whose call crossed it. `user` is the caller whose call crossed it.
 */
export interface BudgetAuditEvent {
  event: 'budget';
  time: number;
  requestId: string;
  tenant: string;
  user: string;
  kind: 'warn';
  outcome: 'warned';
  budget: string;
  unit: 'calls' | 'cost';
  /** Usage after the call that crossed the threshold, and the limit. */
  used: number;
  limit: number;
  /** When the period ends (ISO 8601). */
  resetAt: string;
  tool: string;
  callId: string;
}

/**
 * Where an event sits in its hash chain (docs/operations.md#tamper-evident-audit), added as it is written
 * while `audit.chain` is on: `chain` names the chain (replica instance, and the tenant), `seq` counts from
 * 1, `prev` is the SHA-256 of the chain's previous event (null for the first).
 */
export interface ChainLink {
  chain: string;
  seq: number;
  prev: string | null;
}

/** One line of the audit log. */
export type AuditEvent = (CallAuditEvent | ApprovalAuditEvent | CatalogAuditEvent | SecurityAuditEvent | TaskAuditEvent | RelayAuditEvent | AuditReadEvent | BudgetAuditEvent) & Partial<ChainLink>;

export interface AuditSink {
  /** False for the `off` sink: the audit policy then skips hashing and building events altogether. */
  readonly enabled?: boolean;
  /** Never throws and never blocks the call; events are written in order. */
  write(event: AuditEvent): void;
  /** Resolves once every event written so far is on its medium. */
  flush(): Promise<void>;
  /** Flushes, then releases the medium. Events written afterwards are still appended (synchronously). */
  close(): Promise<void>;
}
