import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../helpers/victim-tenant.js';

// A tenant floods calls past its budget from many users at once: every call past the limit is refused
// without running, the per-period rankings stay bounded, and another tenant is answered within a second.
const USERS = 150;
let app: FastifyInstance;
let victim: string;
const tokens: string[] = [];

beforeAll(async () => {
  const acme = { limits: { maxInFlight: 256 }, budgets: [{ id: 'ten', scope: 'tenant', period: 'day', calls: 10, tools: ['get_weather'] }] };
  app = await buildTestApp(testConfig({ functions: VICTIM_FUNCTIONS, tenants: { acme, [VICTIM_TENANT]: VICTIM_TENANT_CONFIG } }));
  for (let i = 0; i < USERS; i += 1) tokens.push(await signToken({ sub: `mallory-${i}` }));
  victim = await victimOf(app);
}, 60_000);
afterAll(() => app?.close());

describe('a tenant flooding calls past its budget', () => {
  it('is refused past the limit, keeps its rankings bounded, and never slows another tenant', async () => {
    const codes: number[] = [];
    await expectVictimServedDuring(app, victim, (rounds) =>
      repeatUntil(
        rounds,
        async () => {
          const answers = await Promise.all(tokens.map((token) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } })));
          codes.push(...answers.map((answer) => answer.statusCode));
        },
        // A repeat is 150 refusals answered at once: up to 200 of them, bounded by repeatUntil's 20 s, so the
        // victim is sampled its rounds even when the floods end fast (20 repeats ended after 3 rounds in one CI run).
        { maxRepeats: 200 },
      ),
    );
    expect(codes.filter((code) => code === 200)).toHaveLength(10);
    expect(codes.filter((code) => code === 429)).toHaveLength(codes.length - 10);
    const admin = await signToken({ sub: 'root', roles: ['admin'] });
    const view = (await app.inject({ method: 'GET', url: '/v1/admin/usage', headers: bearer(admin) })).json();
    expect(view.budgets[0]).toMatchObject({ id: 'ten', used: 10, remaining: 0 });
    expect(view.budgets[0].topUsers.reduce((sum: number, row: { used: number }) => sum + row.used, 0)).toBeLessThanOrEqual(10);
  }, 60_000);
});
