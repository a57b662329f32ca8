import { createHash, randomBytes } from 'node:crypto';
import { keyMinters } from '../auth/key-holders.js';
import { failureResult } from '../call/tool-result.js';
import { jsonSizeUpTo } from '../shared/json-size.js';
import { hashTag } from '../store/hash-tag.js';
import type { StateStore } from '../store/types.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { ErrorType, ToolResult } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { pageOf } from './page.js';
import { storedRecord } from './view.js';
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

// Pending requests are counted in lease groups (src/store/types.ts): one per requester and one per tenant,
// each holding the ids of the undecided requests until their expiry, so the bounds, the pending listing and
// the metrics read a count or an index, never every record. Keys one script touches share the tenant's tag.
const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);
const tagOf = (tenant: string): string => hashTag(digest(tenant));
const pendingGroup = (tenant: string): string => `approvals-pending:${tagOf(tenant)}`;
const requesterGroup = (tenant: string, user: string): string => `approvals-of:${tagOf(tenant)}:${digest(`${tenant}\u0000${user}`)}`;
const leasePrefix = (tenant: string): string => `approval-pending:${tagOf(tenant)}:`;
/** The most pending requests read for one tenant (the schema's bound on approval.maxPendingPerTenant). */
export const MAX_PENDING_PER_TENANT = 10_000;


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

  /** Uncounts a request that left `pending`; a lease left behind (store down) ends at the request's expiry anyway. */
  const uncount = (record: ApprovalRecord): Promise<void> =>
    store
      .releaseLease({ id: record.id, record: { key: leasePrefix(record.tenant) + record.id, value: record.id }, groups: [requesterGroup(record.tenant, record.requester.user), pendingGroup(record.tenant)] })
      .then(() => undefined, () => undefined);

  /** Moves a pending record to a final state in one compareAndSet; CONFLICT when someone else got there first. */
  const transition = async (raw: string, next: ApprovalRecord): Promise<ApprovalRecord> => {
    const written = await store.compareAndSet(keyOf(next.tenant, next.id), raw, JSON.stringify(storedRecord(next)));
    if (!written) throw new ApprovalError('CONFLICT', 'approval was already decided');
    await uncount(next);
    options.onDecided?.(next);
    return next;
  };

  /** Refuses arguments too large to park: each of the model's and the bound arguments, in UTF-8 JSON bytes. */
  const checkSize = (input: CreateApprovalInput): void => {
    const { maxArgumentsBytes } = input.bounds;
    const { arguments: model, boundArguments } = input.call;
    if ([model, boundArguments].some((value) => value !== undefined && jsonSizeUpTo(value, maxArgumentsBytes) > maxArgumentsBytes)) {
      throw new ApprovalError('TOO_LARGE', `the arguments of ${input.call.name} are larger than ${maxArgumentsBytes} bytes, the most a call that waits for approval may carry (approval.maxArgumentsBytes)`);
    }
  };

  /** Counts a new request in its requester's and its tenant's group, or refuses it when either is full. */
  const count = async (record: ApprovalRecord, input: CreateApprovalInput): Promise<void> => {
    const { maxPendingPerUser, maxPendingPerTenant } = input.bounds;
    const own = requesterGroup(record.tenant, record.requester.user);
    const shared = pendingGroup(record.tenant);
    const grant = await store.acquireLease({
      id: record.id,
      record: { key: leasePrefix(record.tenant) + record.id, value: record.id },
      ttlMs: input.expiresMs,
      own: { key: own, limit: maxPendingPerUser, recordPrefix: leasePrefix(record.tenant), evict: false },
      shared: { key: shared, limit: maxPendingPerTenant },
    });
    if (grant.granted) return;
    const byUser = grant.full === 'own';
    const soonest = (await store.readLeases(byUser ? own : shared, 1).catch(() => undefined))?.soonest[0];
    const retryAfterMs = Math.max(1000, (soonest?.expiresAt ?? now() + 60_000) - now());
    throw new ApprovalError(
      'TOO_MANY',
      byUser
        ? `you already have ${maxPendingPerUser} calls waiting for approval (approval.maxPendingPerUser); the call did not run: retry once one is decided or expires`
        : `your tenant already has ${maxPendingPerTenant} calls waiting for approval (approval.maxPendingPerTenant); the call did not run: retry once one is decided or expires`,
      retryAfterMs,
    );
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

  const oldestFirst = (a: ApprovalRecord, b: ApprovalRecord): number => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  const list = async (tenant: string): Promise<ApprovalRecord[]> => {
    const entries = await store.scan(`approval:${encodeURIComponent(tenant)}:`);
    const settled = await Promise.all(entries.map(({ value }) => settleExpiry(value, JSON.parse(value) as ApprovalRecord)));
    return settled.sort(oldestFirst);
  };

  /** Pages the ids first (the index holds every pending id with its expiry), then reads only the page's records. */
  const pendingPage: ApprovalService['pendingPage'] = async (tenant, { requester, limit, cursor }) => {
    const group = requester === undefined ? pendingGroup(tenant) : requesterGroup(tenant, requester);
    const { soonest } = await store.readLeases(group, MAX_PENDING_PER_TENANT);
    const page = pageOf(soonest, ({ expiresAt, id }) => ({ at: expiresAt, id }), 'ascending', limit, cursor);
    const raws = await Promise.all(page.items.map(({ id }) => store.get(keyOf(tenant, id))));
    const settled = await Promise.all(raws.filter((raw): raw is string => raw !== null).map((raw) => settleExpiry(raw, JSON.parse(raw) as ApprovalRecord)));
    return { items: settled.filter((record) => record.status === 'pending'), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  };

  return {
    async create(input: CreateApprovalInput) {
      checkSize(input);
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
      await count(record, input);
      const written = await store.setIfAbsent(keyOf(record.tenant, record.id), JSON.stringify(record), { ttlMs: input.expiresMs + retentionMs }).catch(async (error: unknown) => {
        await uncount(record);
        throw error;
      });
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
      return (await pendingPage(tenant, { limit: MAX_PENDING_PER_TENANT })).items.sort(oldestFirst);
    },
    pendingPage,

    list,
    async pendingByTenant(tenants) {
      const pending = new Map<string, { count: number; nextExpiresAt: number }>();
      await Promise.all(
        [...new Set(tenants)].map(async (tenant) => {
          const { count, soonest } = await store.readLeases(pendingGroup(tenant), 1);
          if (count > 0 && soonest[0]) pending.set(tenant, { count, nextExpiresAt: soonest[0].expiresAt });
        }),
      );
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
      await store.compareAndSet(keyOf(record.tenant, id), JSON.stringify(storedRecord(approved)), JSON.stringify(storedRecord(done))).catch((error: unknown) => {
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
