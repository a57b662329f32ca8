import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

// Two gateway replicas sharing one Redis charge the same budget counters (docs/governance.md#budgets).
const REDIS_URL = testRedisUrl();
const prefix = `tg-test-budgets:${randomBytes(6).toString('hex')}:`;
let replicaA: FastifyInstance;
let replicaB: FastifyInstance;
let alice: string;
let globex: string;

beforeAll(async () => {
  if (!REDIS_URL) return;
  // Room for all 200 at once on each replica (the default admits 64 in flight per tenant).
  const tenant = { limits: { maxInFlight: 256 }, budgets: [{ id: 'hundred', scope: 'tenant', period: 'day', calls: 100, tools: ['get_weather'] }] };
  const config = testConfig({ store: { kind: 'redis', url: REDIS_URL, prefix }, tenants: { acme: tenant, globex: tenant } });
  [replicaA, replicaB] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
  [alice, globex] = await Promise.all([signToken({ sub: 'alice' }), signToken({ sub: 'alice', tenant: 'globex' })]);
});
afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const execute = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });

describe.skipIf(!REDIS_URL)('a budget on two replicas sharing one Redis', () => {
  it('admits exactly 100 of 200 concurrent calls against a budget of 100, and charges none of them to another tenant', async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => execute(i % 2 === 0 ? replicaA : replicaB, alice)));
    const codes = answers.map((answer) => answer.statusCode);
    expect(new Set(codes)).toEqual(new Set([200, 429]));
    expect(codes.filter((code) => code === 200)).toHaveLength(100);
    expect(codes.filter((code) => code === 429)).toHaveLength(100);
    expect(answers.filter((answer) => answer.statusCode === 429).every((answer) => answer.json().error.errorType === 'QUOTA_EXCEEDED')).toBe(true);
    // Both replicas read the one counter.
    for (const app of [replicaA, replicaB]) {
      const usage = (await app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(alice) })).json();
      expect(usage.budgets[0]).toMatchObject({ id: 'hundred', used: 100, remaining: 0 });
    }
    // globex has the same budget and the same tool name: untouched.
    expect((await execute(replicaB, globex)).statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
