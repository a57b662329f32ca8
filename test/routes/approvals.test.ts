import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';

let app: FastifyInstance;
let shortApp: FastifyInstance;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  app = await buildTestApp(governedConfig());
  shortApp = await buildTestApp(governedConfig({ tenants: { acme: { policies: { approval: { tools: ['create_ticket'], expiresMs: 30 } } } } }));
  tokens.alice = await signToken({ sub: 'alice', roles: [] });
  tokens.bob = await signToken({ sub: 'bob', roles: ['approver'] });
  tokens.carol = await signToken({ sub: 'carol', roles: ['admin'] });
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
    expect((await decide('selfApprover', approvalId, 'approve')).json()).toMatchObject({ statusCode: 403, code: 'TG_FORBIDDEN' });
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
