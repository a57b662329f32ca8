import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createApprovalService } from '../../../src/approvals/service.js';
import { ApprovalError, type ApprovalRecord, type CreateApprovalInput } from '../../../src/approvals/types.js';
import { successResult } from '../../../src/call/tool-result.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import type { Principal } from '../../../src/call/principal.js';
import { makeCall, makeTool } from '../../helpers/policy-fixtures.js';
import { deleteRedisKeys, testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-approvals:${randomBytes(6).toString('hex')}:`;

const requester: Principal = { tenant: 'acme', user: 'alice', roles: ['user'], claims: { sub: 'alice' } };
const approver: Principal = { tenant: 'acme', user: 'bob', roles: ['approver'], claims: {} };
const admin: Principal = { tenant: 'acme', user: 'carol', roles: ['admin'], claims: {} };
const bystander: Principal = { tenant: 'acme', user: 'dave', roles: ['user'], claims: {} };
const foreignApprover: Principal = { tenant: 'globex', user: 'erin', roles: ['approver'], claims: {} };

const input = (overrides: Partial<CreateApprovalInput> = {}): CreateApprovalInput => ({
  principal: requester,
  call: { name: 'create_ticket', arguments: { title: 't' }, callId: 'call_1', source: 'function' },
  requestId: 'req-1',
  depth: 0,
  expiresMs: 60_000,
  bounds: { maxPendingPerUser: 20, maxPendingPerTenant: 200, maxArgumentsBytes: 65_536 },
  ...overrides,
});

const runAs = (log: string[]) => async (record: ApprovalRecord) => {
  log.push(record.requester.user);
  return successResult(makeCall(makeTool({ name: record.call.name }), record.call.arguments, record.call.callId), 'ticket #1');
};

const codeOf = async (promise: Promise<unknown>): Promise<string | undefined> =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof ApprovalError ? error.code : String(error)),
  );

afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const stores: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) stores.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);

describe.each(stores)('approvals on the %s store', (_kind, makeStore) => {
  const store = makeStore();
  afterAll(() => store.close());

  it('creates unguessable ids and runs an approved call once, as the requester', async () => {
    const approvals = createApprovalService({ store });
    const record = await approvals.create(input());
    expect(record.id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await approvals.listPending('acme')).map((r) => r.id)).toContain(record.id);
    const ran: string[] = [];
    const done = await approvals.approve(record.id, approver, runAs(ran));
    expect(ran).toEqual(['alice']);
    expect(done).toMatchObject({ status: 'approved', decidedBy: 'bob', result: { ok: true, output: 'ticket #1' } });
    expect((await approvals.get(record.id, requester)).result?.output).toBe('ticket #1');
    expect((await approvals.listPending('acme')).map((r) => r.id)).not.toContain(record.id);
  });

  it('executes once when two approvers approve at the same moment', async () => {
    const approvals = createApprovalService({ store });
    const record = await approvals.create(input());
    const ran: string[] = [];
    const outcomes = await Promise.allSettled([approvals.approve(record.id, approver, runAs(ran)), approvals.approve(record.id, admin, runAs(ran))]);
    expect(ran).toHaveLength(1);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect((rejected.reason as ApprovalError).code).toBe('CONFLICT');
  });

  it('never lets the requester approve their own call, even as an approver', async () => {
    const approvals = createApprovalService({ store });
    const selfApprover = { ...requester, roles: ['approver'] };
    const record = await approvals.create(input({ principal: selfApprover }));
    expect(await codeOf(approvals.approve(record.id, selfApprover, runAs([])))).toBe('SELF_APPROVAL');
    expect(await codeOf(approvals.approve(record.id, bystander, runAs([])))).toBe('FORBIDDEN');
  });

  it('refuses a decider who shares a key holder with the requester: minted by, minter of, or minted by the same admin', async () => {
    const approvals = createApprovalService({ store });
    const keyOf = (user: string, roles: string[], mintedBy: string[]): Principal => ({
      tenant: 'acme',
      user,
      roles,
      claims: {},
      credential: { kind: 'runtimeKey', id: `k_${user}`, sha256: '0'.repeat(64), issuers: mintedBy.map((minter) => ({ user: minter, kind: 'jwt' as const })) },
    });
    const refused = [
      [admin, keyOf('made-up', ['approver'], ['carol'])], // the admin's own call, her minted approver key
      [keyOf('req-bot', [], ['carol']), admin], // a call with a key the admin minted, decided by her
      [keyOf('req-bot', [], ['carol']), keyOf('appr-bot', ['approver'], ['carol'])], // two keys of one admin
      [admin, keyOf('deep', ['approver'], ['deputy', 'carol'])], // through a chain of keys
    ] as const;
    for (const [who, decider] of refused) {
      const record = await approvals.create(input({ principal: who }));
      expect(await codeOf(approvals.approve(record.id, decider, runAs([])))).toBe('SELF_APPROVAL');
      expect(await codeOf(approvals.deny(record.id, decider))).toBe('SELF_APPROVAL');
      expect((await approvals.get(record.id, approver)).status).toBe('pending');
    }
    const ran: string[] = [];
    const record = await approvals.create(input({ principal: keyOf('req-bot', [], ['carol']) }));
    expect((await approvals.approve(record.id, keyOf('other-appr', ['approver'], ['bob']), runAs(ran))).status).toBe('approved');
    expect(ran).toEqual(['req-bot']);
  });

  it('lets only the requester and approvers of the same tenant read a record', async () => {
    const approvals = createApprovalService({ store });
    const record = await approvals.create(input());
    expect((await approvals.get(record.id, requester)).id).toBe(record.id);
    expect((await approvals.get(record.id, approver)).id).toBe(record.id);
    expect(await codeOf(approvals.get(record.id, bystander))).toBe('FORBIDDEN');
    expect(await codeOf(approvals.get(record.id, foreignApprover))).toBe('NOT_FOUND');
    expect(await codeOf(approvals.approve(record.id, foreignApprover, runAs([])))).toBe('NOT_FOUND');
  });

  it('stores APPROVAL_DENIED on deny and refuses a later approve', async () => {
    const approvals = createApprovalService({ store });
    const record = await approvals.create(input());
    const denied = await approvals.deny(record.id, approver, 'not today');
    expect(denied.result?.error).toEqual({ errorType: 'APPROVAL_DENIED', error: 'approval denied: not today' });
    const ran: string[] = [];
    expect(await codeOf(approvals.approve(record.id, admin, runAs(ran)))).toBe('CONFLICT');
    expect(ran).toEqual([]);
  });

  it('expires a record past its time and answers APPROVAL_EXPIRED', async () => {
    let t = Date.now();
    const approvals = createApprovalService({ store, now: () => t });
    const record = await approvals.create(input({ expiresMs: 1_000 }));
    t += 1_000;
    expect(await codeOf(approvals.approve(record.id, approver, runAs([])))).toBe('EXPIRED');
    const read = await approvals.get(record.id, requester);
    expect(read.status).toBe('expired');
    expect(read.result?.error?.errorType).toBe('APPROVAL_EXPIRED');
    const other = await approvals.create(input());
    expect((await approvals.expire(other.id, 'acme')).status).toBe('expired');
  });

  it('bounds pending requests per requester and per tenant, frees a place on decision, and refuses oversized arguments', async () => {
    const tenant = `bounded-${randomBytes(4).toString('hex')}`;
    const who = (user: string): Principal => ({ tenant, user, roles: [], claims: {} });
    const decider: Principal = { tenant, user: 'boss', roles: ['approver'], claims: {} };
    const approvals = createApprovalService({ store });
    const bounds = { maxPendingPerUser: 2, maxPendingPerTenant: 3, maxArgumentsBytes: 64 };
    const ask = (user: string, title = 't') => approvals.create(input({ principal: who(user), bounds, call: { name: 'create_ticket', arguments: { title }, callId: 'c', source: 'function' } }));
    const first = await ask('mallory');
    await ask('mallory');
    const refused = await ask('mallory').then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(ApprovalError);
    expect(refused).toMatchObject({ code: 'TOO_MANY', message: expect.stringContaining('approval.maxPendingPerUser') });
    expect((refused as ApprovalError).retryAfterMs).toBeGreaterThan(50_000);
    await ask('trent');
    expect(await codeOf(ask('walter'))).toBe('TOO_MANY');
    expect(await codeOf(ask('walter', 'x'.repeat(64)))).toBe('TOO_LARGE');
    expect((await approvals.pendingByTenant([tenant, 'nobody'])).get(tenant)).toMatchObject({ count: 3 });
    // Sorted: calls created in one millisecond tie on createdAt, and ties go by random id.
    expect((await approvals.listPending(tenant)).map((record) => record.requester.user).sort()).toEqual(['mallory', 'mallory', 'trent']);
    await approvals.deny(first.id, decider);
    expect((await approvals.pendingByTenant([tenant])).get(tenant)?.count).toBe(2);
    await ask('walter');
    expect(await codeOf(ask('mallory'))).toBe('TOO_MANY');
  });
});
