import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';

let app: FastifyInstance;
let shortApp: FastifyInstance;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  // The fixture's record is shared by every test file of a worker: count only this file's runs.
  governedState().executions.length = 0;
  app = await buildTestApp(governedConfig());
  shortApp = await buildTestApp(governedConfig({ tenants: { acme: { policies: { approval: { tools: ['create_ticket'], expiresMs: 30 } } } } }));
  tokens.alice = await signToken({ sub: 'alice', roles: [] });
  tokens.bob = await signToken({ sub: 'bob', roles: ['approver'] });
  tokens.carol = await signToken({ sub: 'carol', roles: ['admin'] });
  tokens.bobAdmin = await signToken({ sub: 'bob', roles: ['admin'] });
  tokens.dave = await signToken({ sub: 'dave', roles: [] });
  tokens.selfApprover = await signToken({ sub: 'sam', roles: ['approver'] });
  tokens.foreign = await signToken({ sub: 'erin', tenant: 'globex', roles: ['approver'] });
});
afterAll(async () => Promise.all([app.close(), shortApp.close()]));

const as = (who: string) => bearer(tokens[who]!);
const requestTicket = (who: string, title: string, target = app) =>
  target.inject({ method: 'POST', url: '/v1/execute', headers: as(who), payload: { name: 'create_ticket', arguments: { title }, callId: `c-${title}` } });
const get = (who: string, url: string, target = app) => target.inject({ method: 'GET', url, headers: as(who) });
const decide = (who: string, id: string, action: 'approve' | 'deny', target = app) =>
  target.inject({ method: 'POST', url: `/v1/approvals/${id}/${action}`, headers: as(who) });
const executionsOf = (title: string) => governedState().executions.filter((e) => e.title === title);

describe('approvals over HTTP', () => {
  it('runs request → 202 → approver lists → approve → requester fetches the result', async () => {
    const pending = await requestTicket('alice', 'printer');
    expect(pending.statusCode).toBe(202);
    const body = pending.json();
    expect(body).toMatchObject({ ok: false, status: 'pending_approval', name: 'create_ticket', callId: 'c-printer' });
    expect(body.approvalId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(executionsOf('printer')).toHaveLength(0);

    const listed = await get('bob', '/v1/approvals?status=pending');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().approvals.map((a: { id: string }) => a.id)).toContain(body.approvalId);
    expect((await get('dave', '/v1/approvals')).json().approvals).toEqual([]); // others see only their own

    const approved = await decide('bob', body.approvalId, 'approve');
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'approved', decidedBy: 'bob', result: { ok: true, callId: 'c-printer' } });
    expect(executionsOf('printer')).toEqual([{ title: 'printer', user: 'alice' }]); // ran as the requester

    const fetched = await get('alice', `/v1/approvals/${body.approvalId}`);
    expect(fetched.json().result.output).toBe('ticket "printer" created for alice');
  });

  it('refuses self-approval, non-approvers and other tenants, and hides the record from bystanders', async () => {
    const { approvalId } = (await requestTicket('selfApprover', 'self')).json();
    expect((await decide('selfApprover', approvalId, 'approve')).json()).toMatchObject({ statusCode: 403, code: 'TG_SELF_APPROVAL' });
    expect((await decide('dave', approvalId, 'approve')).statusCode).toBe(403);
    expect((await decide('foreign', approvalId, 'approve')).statusCode).toBe(404);
    expect((await get('dave', `/v1/approvals/${approvalId}`)).statusCode).toBe(403);
    expect((await get('foreign', `/v1/approvals/${approvalId}`)).statusCode).toBe(404);
    expect(executionsOf('self')).toHaveLength(0);
  });

  it('stores APPROVAL_DENIED on deny and never runs the call', async () => {
    const { approvalId } = (await requestTicket('alice', 'denied')).json();
    const denied = await decide('carol', approvalId, 'deny');
    expect(denied.json()).toMatchObject({ status: 'denied', result: { ok: false, error: { errorType: 'APPROVAL_DENIED' } } });
    expect((await decide('bob', approvalId, 'approve')).statusCode).toBe(409);
    expect((await get('alice', `/v1/approvals/${approvalId}`)).json().result.error.errorType).toBe('APPROVAL_DENIED');
    expect(executionsOf('denied')).toHaveLength(0);
  });

  it('expires an undecided approval with APPROVAL_EXPIRED', async () => {
    const { approvalId } = (await requestTicket('alice', 'late', shortApp)).json();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await decide('bob', approvalId, 'approve', shortApp)).json()).toMatchObject({ statusCode: 409, message: 'approval expired' });
    const read = await get('alice', `/v1/approvals/${approvalId}`, shortApp);
    expect(read.json()).toMatchObject({ status: 'expired', result: { error: { errorType: 'APPROVAL_EXPIRED' } } });
    expect(executionsOf('late')).toHaveLength(0);
  });

  it('executes once when two approvers approve at the same time', async () => {
    const { approvalId } = (await requestTicket('alice', 'race')).json();
    const [first, second] = await Promise.all([decide('bob', approvalId, 'approve'), decide('carol', approvalId, 'approve')]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 409]);
    expect(executionsOf('race')).toHaveLength(1);
  });
});

describe('separation of duties with runtime keys', () => {
  // carol is a tenant admin (a JWT); keys she mints are held by her.
  const mint = async (who: string, user: string, roles: string[]): Promise<string> => {
    const created = await app.inject({ method: 'POST', url: '/v1/admin/keys', headers: as(who), payload: { user, roles } });
    expect(created.statusCode).toBe(201);
    return created.json().key;
  };
  const decideWith = (key: string, id: string, action: 'approve' | 'deny' = 'approve') =>
    app.inject({ method: 'POST', url: `/v1/approvals/${id}/${action}`, headers: bearer(key) });
  const requestWith = (key: string, title: string) =>
    app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(key), payload: { name: 'create_ticket', arguments: { title }, callId: `c-${title}` } });

  it('refuses an approver key an admin minted for a made-up user on her own call; a genuine approver still decides it', async () => {
    const { approvalId } = (await requestTicket('carol', 'sod-own')).json();
    const zed = await mint('carol', 'zed-made-up', ['approver']);
    for (const action of ['approve', 'deny'] as const) {
      const refused = await decideWith(zed, approvalId, action);
      expect(refused.json()).toMatchObject({ statusCode: 403, code: 'TG_SELF_APPROVAL' });
    }
    expect(executionsOf('sod-own')).toHaveLength(0);
    expect((await get('carol', `/v1/approvals/${approvalId}`)).json().status).toBe('pending');

    const approved = await decide('bob', approvalId, 'approve');
    expect(approved.json()).toMatchObject({ status: 'approved', decidedBy: 'bob', result: { ok: true } });
    expect(executionsOf('sod-own')).toEqual([{ title: 'sod-own', user: 'carol' }]);
  });

  it("refuses the admin on a call made with a key she minted, and two keys minted by one admin on each other's calls", async () => {
    const requester = await mint('carol', 'req-bot', []);
    const approver = await mint('carol', 'appr-bot', ['approver']);
    const { approvalId } = (await requestWith(requester, 'sod-minted')).json();
    expect((await decide('carol', approvalId, 'approve')).json()).toMatchObject({ statusCode: 403, code: 'TG_SELF_APPROVAL' });
    expect((await decideWith(approver, approvalId)).json()).toMatchObject({ statusCode: 403, code: 'TG_SELF_APPROVAL' });
    expect(executionsOf('sod-minted')).toHaveLength(0);
    // Another admin's approver key is a different person: it may decide.
    const other = await mint('bobAdmin', 'other-appr', ['approver']);
    expect((await decideWith(other, approvalId)).json()).toMatchObject({ status: 'approved', result: { ok: true } });
    expect(executionsOf('sod-minted')).toEqual([{ title: 'sod-minted', user: 'req-bot' }]);
  });

  it('follows the chain: an approver key minted by a key the requester minted is refused too', async () => {
    const deputy = await mint('carol', 'deputy', ['admin']);
    const created = await app.inject({ method: 'POST', url: '/v1/admin/keys', headers: bearer(deputy), payload: { user: 'deputy-appr', roles: ['approver'] } });
    const { approvalId } = (await requestTicket('carol', 'sod-chain')).json();
    expect((await decideWith(created.json().key, approvalId)).json()).toMatchObject({ statusCode: 403, code: 'TG_SELF_APPROVAL' });
    expect((await decideWith(deputy, approvalId)).json()).toMatchObject({ statusCode: 403, code: 'TG_SELF_APPROVAL' });
    expect((await decide('bob', approvalId, 'approve')).statusCode).toBe(200);
  });
});

describe('the approvals listing', () => {
  let paged: FastifyInstance;
  beforeAll(async () => {
    paged = await buildTestApp(governedConfig({ tenants: { acme: { policies: { approval: { tools: ['create_ticket'], maxPendingPerUser: 3 } } } } }));
  });
  afterAll(() => paged.close());

  it('pages with limit and cursor, soonest to expire first, each approval once; a cursor it never gave is a 400', async () => {
    const ids: string[] = [];
    for (const who of ['alice', 'dave', 'carol'] as const) {
      for (let i = 0; i < 2; i += 1) {
        ids.push((await requestTicket(who, `page-${who}-${i}`, paged)).json().approvalId);
        // Expiries in distinct milliseconds: two created in one millisecond tie, and ties go by random id.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 5; i += 1) {
      const page = await get('bob', `/v1/approvals?limit=4${cursor ? `&cursor=${cursor}` : ''}`, paged);
      expect(page.statusCode).toBe(200);
      seen.push(...page.json().approvals.map((approval: { id: string }) => approval.id));
      cursor = page.json().nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(ids);
    // A requester pages through their own only.
    expect((await get('dave', '/v1/approvals?limit=1', paged)).json()).toMatchObject({ approvals: [{ requester: 'dave' }], nextCursor: expect.any(String) });
    expect((await get('bob', '/v1/approvals?cursor=bm90LWEtY3Vyc29y', paged)).json()).toMatchObject({ statusCode: 400, code: 'TG_BAD_REQUEST' });
    expect((await get('bob', '/v1/approvals?limit=201', paged)).statusCode).toBe(400);
  });

  it('lists large arguments by size, digest and preview; the approval itself has them whole', async () => {
    const title = `big-${'z'.repeat(10_000)}`;
    const asked = await paged.inject({ method: 'POST', url: '/v1/execute', headers: as('carol'), payload: { name: 'create_ticket', arguments: { title }, callId: 'c-big' } });
    const { approvalId } = asked.json();
    const listed = (await get('bob', '/v1/approvals?status=pending&limit=200', paged)).json().approvals.find((approval: { id: string }) => approval.id === approvalId);
    expect(listed).toMatchObject({ argumentsBytes: JSON.stringify({ title }).length, argumentsSha256: expect.stringMatching(/^[0-9a-f]{64}$/), argumentsPreview: expect.stringMatching(/^\{"title":"big-z+$/) });
    expect(listed.argumentsPreview).toHaveLength(512);
    expect(listed).not.toHaveProperty('arguments');
    expect((await get('bob', `/v1/approvals/${approvalId}`, paged)).json().arguments).toEqual({ title });
    // Decided, only the summary is kept: the record a tenant leaves behind for a day stays small.
    const denied = await decide('bob', approvalId, 'deny', paged);
    expect(denied.statusCode).toBe(200);
    const kept = (await get('bob', `/v1/approvals/${approvalId}`, paged)).json();
    expect(kept).toMatchObject({ status: 'denied', argumentsBytes: listed.argumentsBytes, argumentsSha256: listed.argumentsSha256, argumentsPreview: listed.argumentsPreview });
    expect(kept).not.toHaveProperty('arguments');
    const stored = await paged.store.scan('approval:acme:');
    expect(stored.find((entry) => entry.key.endsWith(approvalId))!.value.length).toBeLessThan(4096);
    // Small arguments stay inline.
    const small = (await get('bob', '/v1/approvals?limit=1', paged)).json().approvals[0];
    expect(small).toMatchObject({ arguments: { title: expect.any(String) }, argumentsBytes: expect.any(Number) });
  });

  it("refuses a requester's call past maxPendingPerUser with RATE_LIMITED and Retry-After, and arguments past maxArgumentsBytes with VALIDATION_ERROR", async () => {
    tokens['sam-x'] = await signToken({ sub: 'sam-x' });
    const fresh = [];
    for (let i = 0; i < 4; i += 1) fresh.push(await requestTicket('sam-x', `cap-${i}`, paged));
    expect(fresh.map((answer) => answer.statusCode)).toEqual([202, 202, 202, 429]);
    expect(Number(fresh[3]!.headers['retry-after'])).toBeGreaterThan(800);
    expect(fresh[3]!.json()).toMatchObject({ ok: false, error: { errorType: 'RATE_LIMITED', error: expect.stringContaining('approval.maxPendingPerUser') } });
    const huge = await paged.inject({ method: 'POST', url: '/v1/execute', headers: as('alice'), payload: { name: 'create_ticket', arguments: { title: 'h'.repeat(70_000) }, callId: 'c-huge' } });
    expect(huge.statusCode).toBe(200);
    expect(huge.json()).toMatchObject({ ok: false, error: { errorType: 'VALIDATION_ERROR', error: expect.stringContaining('approval.maxArgumentsBytes') } });
  });
});
