import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

// Budgets over REST (docs/governance.md#budgets, docs/api.md#usage): 429 with Retry-After past a budget,
// the budget headers near it, and who may read whose usage.
const budgets = [
  { id: 'alice-day', scope: 'user', period: 'day', calls: 4, warnAt: 0.5, tools: ['get_weather'] },
  { id: 'notes', scope: 'tenant', period: 'month', tools: ['write_note'], cost: 10 },
];
let app: FastifyInstance;
let alice: string;
let bob: string;
let admin: string;
let globex: string;

beforeAll(async () => {
  const tenant = { budgets, toolCosts: { write_note: 4 } };
  app = await buildTestApp(testConfig({ tenants: { acme: tenant, globex: tenant } }));
  [alice, bob, admin, globex] = await Promise.all([
    signToken({ sub: 'alice' }),
    signToken({ sub: 'bob' }),
    signToken({ sub: 'carol', roles: ['admin'] }),
    signToken({ sub: 'alice', tenant: 'globex' }),
  ]);
});
afterAll(() => app?.close());

const execute = (token: string, name: string, args: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args } });
const get = (token: string, url: string) => app.inject({ method: 'GET', url, headers: bearer(token) });

describe('budgets over REST', () => {
  it('tells the budget left in headers near the limit and answers 429 QUOTA_EXCEEDED with Retry-After and the reset past it', async () => {
    const first = await execute(alice, 'get_weather', { city: 'Oslo' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-toolgate-budget-remaining']).toBeUndefined();
    const second = await execute(alice, 'get_weather', { city: 'Oslo' });
    expect(second.headers['x-toolgate-budget-remaining']).toBe('2');
    expect(Date.parse(String(second.headers['x-toolgate-budget-reset']))).toBeGreaterThan(Date.now());
    await execute(alice, 'get_weather', { city: 'Oslo' });
    await execute(alice, 'get_weather', { city: 'Oslo' });
    const refused = await execute(alice, 'get_weather', { city: 'Oslo' });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const body = refused.json();
    expect(body.error.errorType).toBe('QUOTA_EXCEEDED');
    expect(body.output).toMatch(/^TOOL_ERROR: \{"errorType":"QUOTA_EXCEEDED".*resets at \d{4}-\d\d-\d\dT/);
    expect(body.budget).toMatchObject({ id: 'alice-day', remaining: 0, limit: 4 });
    expect(refused.headers['x-toolgate-budget-remaining']).toBe('0');
    // Bob's budget is his own; another tenant's alice (same tool, same user name) has hers.
    expect((await execute(bob, 'get_weather', { city: 'Oslo' })).statusCode).toBe(200);
    expect((await execute(globex, 'get_weather', { city: 'Oslo' })).statusCode).toBe(200);
  });

  it("shows the caller's own usage, and another user's only to the tenant's admin: anyone else hears what a user without usage would", async () => {
    const own = await get(alice, '/v1/usage');
    expect(own.statusCode).toBe(200);
    const day = own.json().budgets.find((b: { id: string }) => b.id === 'alice-day');
    expect(day).toMatchObject({ used: 4, remaining: 0, limit: 4, unit: 'calls', period: 'day', scope: 'user' });
    const other = await get(bob, '/v1/usage?user=alice');
    const nobody = await get(bob, '/v1/usage?user=nobody-at-all');
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(nobody.json());
    const asAdmin = await get(admin, '/v1/usage?user=alice');
    expect(asAdmin.statusCode).toBe(200);
    expect(asAdmin.json().budgets.find((b: { id: string }) => b.id === 'alice-day').used).toBe(4);
    // Another tenant's admin reads its own tenant's counters: globex's alice made one call.
    const globexAlice = await get(globex, '/v1/usage');
    expect(globexAlice.json().budgets.find((b: { id: string }) => b.id === 'alice-day').used).toBe(1);
  });

  it("gives a tenant admin each budget's tenant-wide usage with its top users and tools, and nobody else", async () => {
    await execute(alice, 'write_note', { text: 'a' });
    await execute(bob, 'write_note', { text: 'b' });
    const third = await execute(bob, 'write_note', { text: 'c' });
    expect(third.statusCode).toBe(429);
    expect((await get(alice, '/v1/admin/usage')).statusCode).toBe(403);
    const view = await get(admin, '/v1/admin/usage');
    expect(view.statusCode).toBe(200);
    const notes = view.json().budgets.find((b: { id: string }) => b.id === 'notes');
    expect(notes).toMatchObject({ used: 8, remaining: 2, unit: 'cost', topTools: [{ tool: 'write_note', used: 8 }] });
    expect(notes.topUsers).toEqual(expect.arrayContaining([{ user: 'alice', used: 4 }, { user: 'bob', used: 4 }]));
    const perUser = view.json().budgets.find((b: { id: string }) => b.id === 'alice-day');
    expect(perUser.used).toBeNull();
    expect(perUser.topUsers).toEqual([{ user: 'alice', used: 4 }, { user: 'bob', used: 1 }]);
    // globex's admin view shows none of acme's users.
    const globexAdmin = await signToken({ sub: 'root', tenant: 'globex', roles: ['admin'] });
    const theirs = (await get(globexAdmin, '/v1/admin/usage')).json().budgets.find((b: { id: string }) => b.id === 'alice-day');
    expect(theirs.topUsers).toEqual([{ user: 'alice', used: 1 }]);
  });
});
