import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/config/types.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../helpers/victim-tenant.js';

// A tenant's policy set is outside input: while one tenant loads hostile sets and runs calls on the largest set
// the caps let through, another tenant's calls answer within a second (test/helpers/victim-tenant.ts).
const functions = [...VICTIM_FUNCTIONS, { module: './test/fixtures/functions/cedar.mjs' }];
const config = (evil?: string): GatewayConfig =>
  testConfig({ functions, tenants: {
      // A tenant with Cedar from the start, as a gateway using Cedar has: the module is loaded and warm before the attack.
      acme: { cedar: { policies: 'permit(principal, action, resource);' } },
      [VICTIM_TENANT]: VICTIM_TENANT_CONFIG, ...(evil === undefined ? {} : { evil: { cedar: { policies: evil } } }) } });

/** 100 policies (half the cap) with conditions that all read the call's arguments and the principal's 64 roles. */
const HEAVY = Array.from(
  { length: 100 },
  (_, i) => `permit(principal, action == Action::"call", resource) when { context.arguments.amount > ${i} && context.arguments.amount < ${i + 500} && principal.roles.contains("r${i}") };`,
).join('\n');
const HOSTILE = {
  tenThousand: Array.from({ length: 10_000 }, (_, i) => `permit(principal, action, resource) when { ${i} == ${i} };`).join('\n'),
  brackets: `permit(principal, action, resource) when { ${'('.repeat(50_000)}true${')'.repeat(50_000)} };`,
  ifChain: `permit(principal, action, resource) when { ${'if true then '.repeat(9_000)}true${' else false'.repeat(9_000)} };`,
  // Within the text and count caps, 2 s of CPU per call before `like` patterns were bounded (src/cedar/like-bound.ts).
  like: Array.from({ length: 200 }, () => `permit(principal, action == Action::"call", resource) when { context.arguments.memo like "*${'a'.repeat(1_150)}b" };`).join('\n'),
};

let app: FastifyInstance;
let victim: string;

beforeAll(async () => {
  app = await buildTestApp(config());
  victim = await victimOf(app);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe('hostile Cedar policies', () => {
  it('bounded at load and at every call, never stalling another tenant', async () => {
    const evil = await signToken({ sub: 'mallory', tenant: 'evil', roles: Array.from({ length: 64 }, (_, i) => `r${i}`) });
    const refusals: string[] = [];
    await expectVictimServedDuring(app, victim, (rounds) =>
      repeatUntil(
        rounds,
        async () => {
          for (const text of Object.values(HOSTILE)) {
            // The file's schema caps the text too (a longer one never reaches the loader).
            await Promise.resolve().then(() => app.gateway.reload(config(text))).then(
              () => refusals.push('loaded'),
              (error: Error) => refusals.push(error.message),
            );
          }
          await app.gateway.reload(config(HEAVY));
          for (let i = 0; i < 20; i += 1) {
            // Another amount each time: each call is a decision of its own, not one answered from the cache.
            const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(evil), payload: { name: 'wire', arguments: { amount: 10 + i, memo: 'x'.repeat(500_000) } } });
            expect(res.json()).toMatchObject({ ok: true });
            await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(evil) });
          }
          await app.gateway.reload(config());
        },
        { maxRepeats: 5, maxMs: 60_000 },
      ),
    );
    expect(refusals.filter((message) => message === 'loaded')).toEqual([]);
    expect(refusals.some((message) => /\/tenants\/evil\/cedar/.test(message) && /262144|more than 200 policies/.test(message)), refusals.join('\n')).toBe(true);
    expect(refusals.some((message) => /\/tenants\/evil\/cedar: at policies:1:\d+: expressions are nested deeper than 32 brackets/.test(message))).toBe(true);
    expect(refusals.some((message) => /\/tenants\/evil\/cedar: policy policy\d+: `like` patterns longer than 512 characters/.test(message)), refusals.join('\n')).toBe(true);
  }, 180_000);
});
