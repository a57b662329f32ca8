import { randomBytes } from 'node:crypto';
import { keyMinters } from '../auth/key-holders.js';
import { failureResult } from '../execution/tool-result.js';
import type { StateStore } from '../store/types.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { ErrorType, Principal, ToolResult } from '../types.js';
import { ApprovalError, type ApprovalRecord, type ApprovalService, type CreateApprovalInput, type RunApproved } from './types.js';

const APPROVER_ROLES: readonly string[] = ['approver', 'admin'];
const DAY_MS = 24 * 60 * 60 * 1000;

export interface ApprovalServiceOptions {
  store: StateStore;
  /** How long a decided record stays readable after its expiry time (default one day). */
  retentionMs?: number;
  now?: () => number;
  /** Told of every record this service moved out of `pending` (approved, denied, expired), once. */
  onDecided?: (record: ApprovalRecord) => void;
}

export const isApprover = (principal: Principal, tenant: string): boolean =>
  principal.tenant === tenant && principal.roles.some((role) => APPROVER_ROLES.includes(role));

// Keyed by tenant: a principal of another tenant computes another key and simply finds nothing.
const keyOf = (tenant: string, id: string): string => `approval:${encodeURIComponent(tenant)}:${id}`;
const ID_PATTERN = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * Approval records in the StateStore. Every state change is a compareAndSet from the exact pending
 * record, so two approvers clicking at once (on one replica or two) run the call once: one wins, the
 * other gets CONFLICT.
 */
export function createApprovalService(options: ApprovalServiceOptions): ApprovalService {
  const { store } = options;
  const now = options.now ?? Date.now;
  const retentionMs = options.retentionMs ?? DAY_MS;

  const load = async (tenant: string, id: string): Promise<{ raw: string; record: ApprovalRecord }> => {
    const raw = ID_PATTERN.test(id) ? await store.get(keyOf(tenant, id)) : null;
    if (raw === null) throw new ApprovalError('NOT_FOUND', 'approval not found');
    return { raw, record: JSON.parse(raw) as ApprovalRecord };
  };

  const refusal = (record: ApprovalRecord, errorType: ErrorType, message: string): ToolResult =>
    failureResult(errorType, message, { callId: record.call.callId, name: record.call.name, source: record.call.source, resolvedFrom: record.call.resolvedFrom });

  /** Moves a pending record to a final state in one compareAndSet; CONFLICT when someone else got there first. */
  const transition = async (raw: string, next: ApprovalRecord): Promise<ApprovalRecord> => {
    const written = await store.compareAndSet(keyOf(next.tenant, next.id), raw, JSON.stringify(next));
    if (!written) throw new ApprovalError('CONFLICT', 'approval was already decided');
    options.onDecided?.(next);
    return next;
  };

  /** A pending record past its time becomes `expired` (lazily, on the first touch after expiry). */
  const settleExpiry = async (raw: string, record: ApprovalRecord): Promise<ApprovalRecord> => {
    if (record.status !== 'pending' || now() < record.expiresAt) return record;
    const expired: ApprovalRecord = { ...record, status: 'expired', decidedAt: now(), result: refusal(record, 'APPROVAL_EXPIRED', 'approval expired before a decision') };
    return transition(raw, expired).catch(async (error: unknown) => {
      if (error instanceof ApprovalError && error.code === 'CONFLICT') return (await load(record.tenant, record.id)).record;
      throw error;
    });
  };

  /**
   * Separation of duties (docs/security-model.md#separation-of-duties): whoever minted a runtime key holds
   * it, so a decision is refused when one user is on both sides — the requester deciding, a key the
   * requester minted deciding, a key the decider minted having requested, or two keys minted by one admin.
   */
  const separateDuties = (approver: Principal, record: ApprovalRecord): void => {
    if (approver.user === record.requester.user) throw new ApprovalError('SELF_APPROVAL', 'the requester cannot decide their own approval');
    const deciders = new Set([approver.user, ...keyMinters(approver)]);
    if ([record.requester.user, ...(record.requester.mintedBy ?? [])].some((user) => deciders.has(user))) {
      throw new ApprovalError('SELF_APPROVAL', 'the deciding key and the requesting key are held by the same user (one minted the other, or one admin minted both)');
    }
  };

  /** Loads a record an approver may decide: pending, not expired, not their own. Returns the exact raw value for the CAS. */
  const loadDecidable = async (id: string, approver: Principal): Promise<{ raw: string; record: ApprovalRecord }> => {
    // The role first: a caller who may not decide learns nothing about which ids exist.
    if (!isApprover(approver, approver.tenant)) throw new ApprovalError('FORBIDDEN', 'only an approver or admin of the tenant may decide');
    const { raw, record } = await load(approver.tenant, id);
    separateDuties(approver, record);
    const settled = await settleExpiry(raw, record);
    if (settled.status === 'expired') throw new ApprovalError('EXPIRED', 'approval expired');
    if (settled.status !== 'pending') throw new ApprovalError('CONFLICT', `approval was already ${settled.status}`);
    return { raw, record };
  };

  const list = async (tenant: string): Promise<ApprovalRecord[]> => {
    const entries = await store.scan(`approval:${encodeURIComponent(tenant)}:`);
    const settled = await Promise.all(entries.map(({ value }) => settleExpiry(value, JSON.parse(value) as ApprovalRecord)));
    return settled.sort((a, b) => a.createdAt - b.createdAt);
  };

  return {
    async create(input: CreateApprovalInput) {
      const createdAt = now();
      const record: ApprovalRecord = {
        id: randomBytes(24).toString('base64url'), // 192 random bits
        tenant: input.principal.tenant,
        status: 'pending',
        requester: { user: input.principal.user, roles: [...input.principal.roles], claims: { ...input.principal.claims }, mintedBy: keyMinters(input.principal) },
        call: input.call,
        requestId: input.requestId,
        depth: input.depth,
        ...(input.mode ? { mode: input.mode } : {}),
        ...(input.traceOrigin ? { traceOrigin: input.traceOrigin } : {}),
        createdAt,
        expiresAt: createdAt + input.expiresMs,
      };
      const written = await store.setIfAbsent(keyOf(record.tenant, record.id), JSON.stringify(record), { ttlMs: input.expiresMs + retentionMs });
      if (!written) throw new Error('approval id collision'); // 192 random bits: never in practice
      return record;
    },

    async get(id, viewer) {
      const { raw, record } = await load(viewer.tenant, id);
      if (viewer.user !== record.requester.user && !isApprover(viewer, record.tenant)) {
        throw new ApprovalError('FORBIDDEN', 'only the requester or an approver may read this approval');
      }
      return settleExpiry(raw, record);
    },

    async listPending(tenant) {
      return (await list(tenant)).filter((record) => record.status === 'pending');
    },

    list,
    async pendingByTenant() {
      const pending = new Map<string, { count: number; nextExpiresAt: number }>();
      const at = now();
      for (const { value } of await store.scan('approval:')) {
        const record = JSON.parse(value) as ApprovalRecord;
        if (record.status !== 'pending' || record.expiresAt <= at) continue;
        const entry = pending.get(record.tenant);
        if (entry) {
          entry.count += 1;
          entry.nextExpiresAt = Math.min(entry.nextExpiresAt, record.expiresAt);
        } else pending.set(record.tenant, { count: 1, nextExpiresAt: record.expiresAt });
      }
      return pending;
    },

    async approve(id, approver, run: RunApproved) {
      const { raw, record } = await loadDecidable(id, approver);
      const approved = await transition(raw, { ...record, status: 'approved', decidedBy: approver.user, decidedAt: now() });
      let result: ToolResult;
      try {
        result = await run(approved);
      } catch (error) {
        result = refusal(record, 'TOOL_EXCEPTION', error instanceof Error ? error.message : 'approved call failed');
      }
      const done: ApprovalRecord = { ...approved, result };
      // Only this approver moved the record to `approved`, so nobody else writes it now. The call has run:
      // a store that stopped answering meanwhile must not turn its result into an error (a retry would
      // then only meet CONFLICT); the record stays `approved`, without the result.
      await store.compareAndSet(keyOf(record.tenant, id), JSON.stringify(approved), JSON.stringify(done)).catch((error: unknown) => {
        if (!isStoreUnavailable(error)) throw error;
      });
      return done;
    },

    async deny(id, approver, reason) {
      const { raw, record } = await loadDecidable(id, approver);
      const message = reason ? `approval denied: ${reason}` : 'approval denied';
      return transition(raw, { ...record, status: 'denied', decidedBy: approver.user, decidedAt: now(), result: refusal(record, 'APPROVAL_DENIED', message) });
    },

    async expire(id, tenant) {
      const { raw, record } = await load(tenant, id);
      if (record.status !== 'pending') throw new ApprovalError('CONFLICT', `approval was already ${record.status}`);
      return transition(raw, { ...record, status: 'expired', decidedAt: now(), result: refusal(record, 'APPROVAL_EXPIRED', 'approval expired before a decision') });
    },
  };
}
