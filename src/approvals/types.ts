import { DomainError, type ErrorCode } from '../errors.js';
import type { Page } from './page.js';
import type { JsonObject, ToolMode, ToolResult, ToolSourceKind } from '../call/types.js';
import type { Principal } from '../call/principal.js';

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired';

/**
 * What a decided record keeps of arguments larger than a listing shows (LISTED_ARGUMENTS_BYTES): their size,
 * SHA-256 and a preview; the arguments themselves are dropped (`{}`) once nothing will run them.
 */
export interface ArgumentsSummary {
  bytes: number;
  sha256: string;
  preview: string;
}

/** A call waiting for (or decided by) a human. Stored as JSON in the StateStore. */
export interface ApprovalRecord {
  id: string;
  tenant: string;
  status: ApprovalStatus;
  /**
   * The requester's principal as verified when the call was made; an approved call runs as this principal.
   * `mintedBy`: the users who minted the requester's runtime key (none for config keys and JWTs).
   */
  requester: { user: string; roles: string[]; claims: JsonObject; mintedBy?: string[] };
  /**
   * `arguments` are the model's own (replayed through the whole execution path on approval, where
   * bindings are applied again for the requester); `boundArguments` is what the approver is shown.
   */
  call: { name: string; arguments: JsonObject; boundArguments?: JsonObject; callId: string; resolvedFrom?: string; source: ToolSourceKind | null; argumentsSummary?: ArgumentsSummary };
  requestId: string;
  depth: number;
  mode?: ToolMode;
  createdAt: number;
  expiresAt: number;
  decidedBy?: string;
  decidedAt?: number;
  /** Set once the call has run (approved) or been refused (denied/expired). */
  result?: ToolResult;
  /** While tracing: the span of the call that asked for approval, which the approved run's span links to. */
  traceOrigin?: { traceId: string; spanId: string; traceFlags: number };
}

/** TOO_LARGE and TOO_MANY refuse a new request; the approval policy answers them as the call's result. */
export type ApprovalErrorCode = 'NOT_FOUND' | 'FORBIDDEN' | 'SELF_APPROVAL' | 'CONFLICT' | 'EXPIRED' | 'TOO_LARGE' | 'TOO_MANY';

/** The request-level code of each refusal (an expired record is a conflict with a clear message). */
export const APPROVAL_ERROR_CODES = {
  NOT_FOUND: 'TG_NOT_FOUND',
  FORBIDDEN: 'TG_FORBIDDEN',
  SELF_APPROVAL: 'TG_SELF_APPROVAL',
  CONFLICT: 'TG_CONFLICT',
  EXPIRED: 'TG_CONFLICT',
  TOO_LARGE: 'TG_BAD_REQUEST',
  TOO_MANY: 'TG_RATE_LIMITED',
} as const satisfies Record<ApprovalErrorCode, ErrorCode>;

/** A typed refusal of an approval operation; routes map `code` to TG_NOT_FOUND / TG_FORBIDDEN / TG_CONFLICT. */
export class ApprovalError extends DomainError {
  readonly code: ApprovalErrorCode;
  /** TOO_MANY: when a place is sure to be free again (the soonest pending request of the full group expires). */
  override readonly retryAfterMs: number | undefined;
  constructor(code: ApprovalErrorCode, message: string, retryAfterMs?: number) {
    super(message);
    this.name = 'ApprovalError';
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }

  get gatewayCode(): ErrorCode {
    return APPROVAL_ERROR_CODES[this.code];
  }
}

export interface CreateApprovalInput {
  principal: Principal;
  call: ApprovalRecord['call'];
  requestId: string;
  depth: number;
  mode?: ToolMode;
  expiresMs: number;
  traceOrigin?: ApprovalRecord['traceOrigin'];
  bounds: ApprovalBounds;
}

/** The approval policy's bounds on what waits for a human (docs/governance.md#human-approval). */
export interface ApprovalBounds {
  /** Pending requests one user may have at once. */
  maxPendingPerUser: number;
  /** Pending requests of the whole tenant at once. */
  maxPendingPerTenant: number;
  /** UTF-8 bytes of the call's arguments as stored (the model's, and the bound ones), each. */
  maxArgumentsBytes: number;
}

/** Runs an approved call through the rest of the chain as its requester and returns its result. */
export type RunApproved = (record: ApprovalRecord) => Promise<ToolResult>;

export interface ApprovalService {
  create(input: CreateApprovalInput): Promise<ApprovalRecord>;
  /** Only the requester and the tenant's approvers/admins may read a record. */
  get(id: string, viewer: Principal): Promise<ApprovalRecord>;
  /** Pending records of a tenant, oldest first (callers filter by viewer); read through the tenant's count, never a scan. */
  listPending(tenant: string): Promise<ApprovalRecord[]>;
  /**
   * One page of pending records, soonest to expire first: the tenant's, or only `requester`'s. Pages over the
   * index of pending ids and reads only the page's records.
   */
  pendingPage(tenant: string, options: { requester?: string; limit: number; cursor?: string }): Promise<Page<ApprovalRecord>>;
  /** Every record of a tenant still kept (pending and decided, expiry settled), oldest first. */
  list(tenant: string): Promise<ApprovalRecord[]>;
  approve(id: string, approver: Principal, run: RunApproved): Promise<ApprovalRecord>;
  deny(id: string, approver: Principal, reason?: string): Promise<ApprovalRecord>;
  /** Marks a pending record expired (also done lazily on read once its time is up). */
  expire(id: string, tenant: string): Promise<ApprovalRecord>;
  /**
   * Each of these tenants' undecided, unexpired records: how many, and the soonest expiry (epoch ms). Reads
   * the count the store keeps per tenant (one read per tenant), never the records.
   */
  pendingByTenant(tenants: Iterable<string>): Promise<Map<string, { count: number; nextExpiresAt: number }>>;
}
