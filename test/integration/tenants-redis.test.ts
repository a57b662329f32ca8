import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, OPERATOR_KEY, signToken, testConfig } from '../helpers/build.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

// Tenants as data on two replicas (two apps, one throwaway Redis): what one replica writes through the tenant
// API, the other serves within a second; a deleted tenant is refused on both.
const REDIS_URL = testRedisUrl();
const prefix = `tg-test-tenants:${randomBytes(6).toString('hex')}:`;
const operator = bearer(OPERATOR_KEY);
let replicaA: FastifyInstance;
let replicaB: FastifyInstance;

beforeAll(async () => {
  if (!REDIS_URL) return;
  const config = testConfig({ store: { kind: 'redis', url: REDIS_URL, prefix } });
  [replicaA, replicaB] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
});
afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const toolNames = async (app: FastifyInstance, token: string): Promise<string[] | number> => {
  const listed = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(token) });
  return listed.statusCode === 200 ? (listed.json().tools as Array<{ name: string }>).map((tool) => tool.name) : listed.statusCode;
};

/** Polls `probe` until `done` holds, at most `withinMs`; answers how long it took (or fails the test). */
async function within(withinMs: number, probe: () => Promise<unknown>, done: (value: unknown) => boolean): Promise<number> {
  const started = performance.now();
  let last: unknown;
  while (performance.now() - started < withinMs) {
    last = await probe();
    if (done(last)) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`not within ${withinMs} ms; last seen ${JSON.stringify(last)}`);
}

describe.skipIf(!REDIS_URL)('tenants in Redis on two replicas', () => {
  it('created, used, patched and deleted on one replica, each step seen on the other within a second', async () => {
    const user = await signToken({ tenant: 'acme-eu', sub: 'eve' });
    expect(await toolNames(replicaB, user)).toBe(403);

    const created = await replicaA.inject({ method: 'PUT', url: '/v1/admin/tenants/acme-eu', headers: { ...operator, 'if-none-match': '*' }, payload: { tools: { allow: ['*'], deny: ['explode'] } } });
    expect(created.statusCode).toBe(201);
    // Nothing was compiled for it on B: its first request reads the store.
    await within(1000, () => toolNames(replicaB, user), (names) => Array.isArray(names) && names.includes('get_weather') && !names.includes('explode'));
    const read = await replicaB.inject({ method: 'GET', url: '/v1/admin/tenants/acme-eu', headers: operator });
    expect(read.headers.etag).toBe(created.headers.etag);
    const call = await replicaB.inject({ method: 'POST', url: '/v1/execute', headers: bearer(user), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
    expect(call.json()).toMatchObject({ ok: true });

    // B has it compiled now: the patch on A must reach B over the bus.
    const patched = await replicaA.inject({
      method: 'PATCH',
      url: '/v1/admin/tenants/acme-eu',
      headers: { ...operator, 'content-type': 'application/merge-patch+json', 'if-match': created.headers.etag as string },
      payload: JSON.stringify({ tools: { deny: ['explode', 'get_weather'] } }),
    });
    expect(patched.statusCode).toBe(200);
    const seenIn = await within(1000, () => toolNames(replicaB, user), (names) => Array.isArray(names) && !names.includes('get_weather'));
    expect(seenIn).toBeLessThan(1000);

    const deleted = await replicaA.inject({ method: 'DELETE', url: '/v1/admin/tenants/acme-eu', headers: { ...operator, 'if-match': patched.headers.etag as string } });
    expect(deleted.statusCode).toBe(204);
    // The writer refuses at once; the other replica as soon as the message arrives.
    expect(await toolNames(replicaA, user)).toBe(403);
    await within(1000, () => toolNames(replicaB, user), (status) => status === 403);
    const refused = await replicaB.inject({ method: 'POST', url: '/v1/execute', headers: bearer(user), payload: { name: 'slow', arguments: {} } });
    expect(refused.json()).toMatchObject({ statusCode: 403, code: 'TG_UNKNOWN_TENANT' });
  });

  it('lets a call under way finish on the version it started with, on the other replica', async () => {
    const user = await signToken({ tenant: 'acme-us', sub: 'ula' });
    const created = await replicaA.inject({ method: 'PUT', url: '/v1/admin/tenants/acme-us', headers: operator, payload: {} });
    expect(created.statusCode).toBe(201);
    expect(await toolNames(replicaB, user)).toContain('slow');
    const running = replicaB.inject({ method: 'POST', url: '/v1/execute', headers: bearer(user), payload: { name: 'slow', arguments: { ms: 600 } } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const patched = await replicaA.inject({
      method: 'PATCH',
      url: '/v1/admin/tenants/acme-us',
      headers: { ...operator, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ tools: { deny: ['slow'] } }),
    });
    expect(patched.statusCode).toBe(200);
    await within(1000, () => toolNames(replicaB, user), (names) => Array.isArray(names) && !names.includes('slow'));
    expect((await running).json()).toMatchObject({ ok: true, output: 'waited 600' });
    const next = await replicaB.inject({ method: 'POST', url: '/v1/execute', headers: bearer(user), payload: { name: 'slow', arguments: { ms: 1 } } });
    expect(next.json().ok).toBe(false);
  });

  it('answers 412 to one of two writes racing on one ETag from two replicas', async () => {
    const created = await replicaA.inject({ method: 'PUT', url: '/v1/admin/tenants/acme-race', headers: operator, payload: {} });
    const etag = created.headers.etag as string;
    const write = (app: FastifyInstance, deny: string) =>
      app.inject({ method: 'PATCH', url: '/v1/admin/tenants/acme-race', headers: { ...operator, 'content-type': 'application/merge-patch+json', 'if-match': etag }, payload: JSON.stringify({ tools: { deny: [deny] } }) });
    const answers = await Promise.all([write(replicaA, 'a'), write(replicaB, 'b')]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 412]);
  });

  it('refuses a reload that adds to the file an id the store holds, naming it, and keeps serving', async () => {
    expect((await replicaA.inject({ method: 'PUT', url: '/v1/admin/tenants/initech', headers: operator, payload: {} })).statusCode).toBe(201);
    const next = testConfig({ store: { kind: 'redis', url: REDIS_URL, prefix }, tenants: { acme: {}, globex: {}, initech: {} } });
    await expect(replicaA.gateway.reload(next)).rejects.toThrow(/initech already kept in the state store/);
    // A replica starting with that file is refused the same way (at start every file id is checked against the store).
    await expect(buildTestApp(next)).rejects.toThrow(/initech already kept in the state store/);
    expect(replicaA.gateway.config.tenants).not.toHaveProperty('initech');
    const user = await signToken({ tenant: 'initech', sub: 'ida' });
    expect(await toolNames(replicaA, user)).toContain('get_weather');
  });
});
