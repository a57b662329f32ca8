import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory.js';
import { bearer, buildTestApp, OPERATOR_KEY, signToken, testConfig } from '../helpers/build.js';

// Cedar policies through the tenant API: the same validation as the file (a 400 naming the policy and position).
const store = createMemoryStore();
let app: FastifyInstance;
beforeAll(async () => {
  app = await buildTestApp(testConfig({ functions: [{ module: './test/fixtures/functions/cedar.mjs' }] }), { store });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await store.close();
});

const put = (id: string, payload: unknown) => app.inject({ method: 'PUT', url: `/v1/admin/tenants/${id}`, headers: bearer(OPERATOR_KEY), payload: payload as Record<string, unknown> });

describe('Cedar through the tenant API', () => {
  it('refuses a set with an unknown attribute (400, policy and position named) and serves a valid one', async () => {
    const typo = await put('shop', { cedar: { policies: 'permit(principal, action, resource);\n@id("typo") forbid(principal, action == Action::"call", resource) when { context.arguments.amout > 1 };' } });
    expect(typo.statusCode).toBe(400);
    expect(typo.json()).toMatchObject({ code: 'TG_CONFIG_INVALID' });
    expect(typo.json().message).toMatch(/cedar: policy typo at policies:2:\d+: .*amout/);

    const good = await put('shop', { cedar: { default: 'permit', policies: 'forbid(principal, action == Action::"call", resource == Tool::"wire") when { context.arguments.amount > 1000 };' } });
    expect(good.statusCode).toBe(201);
    const ann = await signToken({ tenant: 'shop', sub: 'ann' });
    const call = (amount: number) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(ann), payload: { name: 'wire', arguments: { amount } } });
    expect((await call(10)).json()).toMatchObject({ ok: true });
    expect((await call(5000)).json()).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED' } });
  }, 120_000);
});
