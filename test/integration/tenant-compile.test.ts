import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createMemoryBus } from '../../src/store/bus.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { createTenantRecords } from '../../src/tenants/records.js';
import { bearer, buildTestApp, OPERATOR_KEY, signToken, testConfig } from '../helpers/build.js';

// Tenants compiled on first use (docs/architecture.md#tenants-compiled-on-first-use): what a reload
// rebuilds, what the cache keeps, and how a change message lost on the bus is healed.
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const toolNames = async (app: FastifyInstance, tenant: string): Promise<string[] | number> => {
  const listed = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(await signToken({ tenant, sub: 'u' })) });
  return listed.statusCode === 200 ? (listed.json().tools as Array<{ name: string }>).map((tool) => tool.name) : listed.statusCode;
};

describe('tenants compiled on first use', () => {
  it('a reload that changes one file tenant compiles that one again and keeps every other compiled tenant', async () => {
    const tenants = { acme: {}, globex: {}, initech: { tools: { deny: ['slow'] } } };
    const app = await buildTestApp(testConfig({ tenants }));
    apps.push(app);
    for (const id of Object.keys(tenants)) expect(await toolNames(app, id)).toContain('get_weather');
    const before = new Map(Object.keys(tenants).map((id) => [id, app.gateway.current().tenants.get(id)!]));

    await app.gateway.reload(testConfig({ tenants: { ...tenants, globex: { tools: { deny: ['get_weather'] } } } }));
    const after = app.gateway.current().tenants;
    expect(after.get('acme')!.chain).toBe(before.get('acme')!.chain);
    expect(after.get('acme')!.view).toBe(before.get('acme')!.view);
    expect(after.get('initech')!.chain).toBe(before.get('initech')!.chain);
    expect(after.get('globex')!.chain).not.toBe(before.get('globex')!.chain);
    // Pools derive from the new snapshot's catalog: every kept tenant starts with empty ones.
    expect(after.get('acme')!.pools).not.toBe(before.get('acme')!.pools);
    expect(await toolNames(app, 'globex')).not.toContain('get_weather');
    expect(await toolNames(app, 'acme')).toContain('get_weather');
  });

  it('a reload that makes a changed file tenant invalid is refused and the old one keeps serving', async () => {
    const app = await buildTestApp(testConfig());
    apps.push(app);
    await expect(app.gateway.reload(testConfig({ tenants: { acme: {}, globex: { policies: { 'rate-limit': { limit: 'many' } } } } }))).rejects.toThrow(/rate-limit/);
    expect(await toolNames(app, 'globex')).toContain('get_weather');
  });

  it('keeps no more than compiledCacheSize tenants compiled from the start, and compiles an evicted one again on its next request', async () => {
    const tenants = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`t${i}`, {}]));
    const app = await buildTestApp(testConfig({ tenants: { acme: {}, ...tenants }, tenancy: { compiledCacheSize: 2 } }));
    apps.push(app);
    expect(app.gateway.current().tenants.size).toBeLessThanOrEqual(2);
    for (const id of Object.keys(tenants)) expect(await toolNames(app, id)).toContain('get_weather');
    expect(app.gateway.current().tenants.size).toBe(2);
    expect(app.gateway.current().tenants.get('t0')).toBeUndefined();
    expect(await toolNames(app, 't0')).toContain('get_weather');
  });

  it('heals a change whose bus message was lost within tenancy.revalidateMs', async () => {
    const store = createMemoryStore();
    const app = await buildTestApp(testConfig({ tenancy: { revalidateMs: 1000 } }), { store });
    apps.push(app);
    // Written beside the app, on a bus it does not hear: as if the message were lost.
    const elsewhere = createTenantRecords(store, createMemoryBus());
    const created = await elsewhere.create('quiet', {}, 'test/setup');
    expect(await toolNames(app, 'quiet')).toContain('get_weather');
    await elsewhere.replace(created!, { tools: { deny: ['get_weather'] } }, 'test/setup');
    // Within the revalidation period the compiled copy still serves (no store read per request)…
    expect(await toolNames(app, 'quiet')).toContain('get_weather');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // …past it, a request starts the check in the background, and a later one sees the change.
    const started = performance.now();
    let names: string[] | number = [];
    while (performance.now() - started < 1000) {
      names = await toolNames(app, 'quiet');
      if (Array.isArray(names) && !names.includes('get_weather')) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(names).not.toContain('get_weather');
    await store.close();
  });

  it('answers a flood of tokens of a tenant nobody created with a bounded number of store reads, and serves the tenant at once once created', async () => {
    const store = createMemoryStore();
    const reads = vi.spyOn(store, 'get');
    const app = await buildTestApp(testConfig({ tenancy: { unknownTtlMs: 60_000 } }), { store });
    apps.push(app);
    const ghostReads = () => reads.mock.calls.filter(([key]) => key === 'tenants:record:ghost').length;
    const ghost = bearer(await signToken({ tenant: 'ghost', sub: 'g' }));
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => app.inject({ method: 'GET', url: '/v1/tools', headers: ghost })));
      expect(answers.map((answer) => answer.statusCode)).toEqual(Array(50).fill(403));
    }
    // 500 requests: one read (the first round's concurrent requests share it), not one per request.
    expect(ghostReads()).toBe(1);
    const created = await app.inject({ method: 'PUT', url: '/v1/admin/tenants/ghost', headers: bearer(OPERATOR_KEY), payload: {} });
    expect(created.statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: '/v1/tools', headers: ghost })).statusCode).toBe(200);
  });

  it('remembers an unknown tenant no longer than tenancy.unknownTtlMs when the message of its creation is lost', async () => {
    const store = createMemoryStore();
    const app = await buildTestApp(testConfig({ tenancy: { unknownTtlMs: 1500 } }), { store });
    apps.push(app);
    expect(await toolNames(app, 'late')).toBe(403);
    // Written beside the app, on a bus it does not hear: as if the message were lost.
    await createTenantRecords(store, createMemoryBus()).create('late', {}, 'test/setup');
    expect(await toolNames(app, 'late')).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect(await toolNames(app, 'late')).toContain('get_weather');
    await store.close();
  });

  it('starts with no tenant compiled, yet refuses a bad one of many at start-up and at reload', async () => {
    const shape = { tools: { deny: ['slow'] }, policies: { 'rate-limit': { limit: 5 } } };
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m${i}`, structuredClone(shape)]));
    await expect(buildTestApp(testConfig({ tenants: { acme: {}, ...many, m49: { policies: { 'rate-limit': { limt: 5 } } } } }))).rejects.toThrow(/tenants\/m49.*limt/);
    const app = await buildTestApp(testConfig({ tenants: { acme: {}, ...many } }));
    apps.push(app);
    expect(app.gateway.current().tenants.size).toBe(0);
    expect(await toolNames(app, 'm1')).toContain('get_weather');
    await expect(app.gateway.reload(testConfig({ tenants: { acme: {}, ...many, m7: { policies: { retry: { jitter: true } } } } }))).rejects.toThrow(/tenants\/m7.*jitter/);
    // A reload changing a warm tenant (m1) and a cold one (m2): the warm one is compiled again and kept, the cold one only checked.
    await app.gateway.reload(testConfig({ tenants: { acme: {}, ...many, m1: { tools: { deny: ['get_weather'] } }, m2: { tools: { deny: ['get_weather'] } } } }));
    expect(app.gateway.current().tenants.isCompiled('m1')).toBe(true);
    expect(app.gateway.current().tenants.isCompiled('m2')).toBe(false);
    expect(await toolNames(app, 'm1')).not.toContain('get_weather');
    expect(await toolNames(app, 'm2')).not.toContain('get_weather');
  });
});
