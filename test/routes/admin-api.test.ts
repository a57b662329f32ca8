import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, JWT_SECRET, OPERATOR_KEY, sha256, signToken, testConfig } from '../helpers/build.js';
import { startMcpUpstream, textTool } from '../helpers/mcp-upstream.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../helpers/victim-tenant.js';

let app: FastifyInstance;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  app = await buildTestApp(testConfig({ tenants: { acme: { tools: { allow: ['*'], deny: ['write_note'] }, roles: { viewer: { deny: ['write_*'] } } }, globex: {} }, admin: { maxKeysPerTenant: 3 } }));
  tokens.admin = API_KEY;
  tokens.operator = OPERATOR_KEY;
  tokens.alice = await signToken({ sub: 'alice', roles: [] });
  tokens.globexAdmin = await signToken({ sub: 'gina', tenant: 'globex', roles: ['admin'] });
});
afterAll(async () => app.close());

const as = (who: string) => bearer(tokens[who] ?? who);
const createKey = (who: string, payload: unknown, target = app) => target.inject({ method: 'POST', url: '/v1/admin/keys', headers: as(who), payload: payload as Record<string, unknown> });
const execute = (token: string, target = app) =>
  target.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });

describe('GET /v1/me', () => {
  it('answers the verified principal and never reads identity from the request', async () => {
    const me = await app.inject({ url: '/v1/me?tenant=globex', headers: { ...as('admin'), 'x-toolgate-tenant': 'globex' } });
    expect(me.json()).toEqual({ tenant: 'acme', user: 'ci-bot', roles: ['admin'], operator: false });
    expect((await app.inject({ url: '/v1/me', headers: as('operator') })).json()).toMatchObject({ operator: true });
    expect((await app.inject({ url: '/v1/me' })).statusCode).toBe(401);
  });
});

describe('runtime API keys', () => {
  it('creates a key shown once, lists it without the key, and the key works until revoked', async () => {
    const created = await createKey('admin', { user: 'build-bot', roles: ['viewer'] });
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const { key, apiKey } = created.json();
    expect(key).toMatch(/^tgk_[0-9a-f]{16}_/);
    expect(apiKey).toMatchObject({ user: 'build-bot', roles: ['viewer'], createdBy: 'ci-bot', lastUsedAt: null });

    expect((await execute(key)).json()).toMatchObject({ ok: true });
    const me = (await app.inject({ url: '/v1/me', headers: bearer(key) })).json();
    expect(me).toEqual({ tenant: 'acme', user: 'build-bot', roles: ['viewer'], operator: false });

    const listed = await app.inject({ url: '/v1/admin/keys', headers: as('admin') });
    const entry = listed.json().keys.find((k: { id: string }) => k.id === apiKey.id);
    expect(entry.lastUsedAt).toEqual(expect.any(String));
    expect(listed.body).not.toContain(key);
    expect(listed.body).not.toContain(key.slice(-43));

    expect((await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${apiKey.id}`, headers: as('admin') })).statusCode).toBe(204);
    const after = await execute(key);
    expect(after.statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/admin/keys', headers: as('admin') })).json().keys.map((k: { id: string }) => k.id)).not.toContain(apiKey.id);
    expect((await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${apiKey.id}`, headers: as('admin') })).statusCode).toBe(404);
  });

  it('ends the keys a revoked key minted, on the next request, and lists them no more', async () => {
    const deputy = (await createKey('admin', { user: 'deputy', roles: ['admin'] })).json();
    const minted = (await createKey(deputy.key, { user: 'minted-bot', roles: ['approver'] })).json();
    expect(minted.apiKey).toMatchObject({ user: 'minted-bot', createdBy: 'deputy', expiresAt: null });
    expect((await execute(minted.key)).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${deputy.apiKey.id}`, headers: as('admin') })).statusCode).toBe(204);
    expect((await execute(deputy.key)).statusCode).toBe(401);
    expect((await execute(minted.key)).statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/admin/keys', headers: as('admin') })).json().keys.map((k: { user: string }) => k.user)).not.toContain('minted-bot');
  });

  it('ends the keys a config key minted once a reload removes, rotates or demotes that key', async () => {
    const admin = { id: 'ci', sha256: sha256(API_KEY), tenant: 'acme', user: 'ci-bot', roles: ['admin'] };
    let next = testConfig();
    const reloading = await buildTestApp(testConfig(), { loadConfig: async () => next });
    try {
      const withKeys = (...apiKeys: Array<Record<string, unknown>>) => testConfig({ auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' }, apiKeys: [...apiKeys, { id: 'ops', sha256: sha256(OPERATOR_KEY), tenant: 'acme', user: 'ops', roles: [] }], operators: [{ apiKey: 'ops' }] } });
      const reload = async (config: ReturnType<typeof testConfig>) => {
        next = config;
        expect((await reloading.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) })).statusCode).toBe(200);
      };
      const jwtAdmin = await signToken({ sub: 'jo', roles: ['admin'] });
      const { key } = (await createKey('admin', { user: 'ci-minted' }, reloading)).json();
      const fromJwt = (await createKey(jwtAdmin, { user: 'jwt-minted' }, reloading)).json().key;
      expect((await execute(key, reloading)).statusCode).toBe(200);
      await reload(withKeys({ ...admin, roles: [] })); // demoted
      expect((await execute(key, reloading)).statusCode).toBe(401);
      await reload(withKeys(admin)); // restored: the same key, the same secret
      expect((await execute(key, reloading)).statusCode).toBe(200);
      await reload(withKeys({ ...admin, sha256: sha256('rotated-secret') })); // rotated
      expect((await execute(key, reloading)).statusCode).toBe(401);
      await reload(withKeys()); // removed
      expect((await execute(key, reloading)).statusCode).toBe(401);
      // toolgate cannot see an identity provider's account end: a JWT admin's key lives until revoked or expired.
      expect((await execute(fromJwt, reloading)).statusCode).toBe(200);
    } finally {
      await reloading.close();
    }
  });

  it('gives a key an expiry when asked, within bounds', async () => {
    const created = (await createKey('admin', { user: 'short-bot', expiresInSec: 3600 })).json();
    expect(Date.parse(created.apiKey.expiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    expect((await execute(created.key)).statusCode).toBe(200);
    for (const expiresInSec of [0, 59, 31_536_001, 1.5, 'never']) expect((await createKey('admin', { user: 'x', expiresInSec })).statusCode).toBe(400);
    await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${created.apiKey.id}`, headers: as('admin') });
  });

  it('keeps each tenant to its own keys: another tenant lists none and revoking its id answers 404', async () => {
    const { apiKey, key } = (await createKey('admin', { user: 'acme-bot' })).json();
    expect((await app.inject({ url: '/v1/admin/keys', headers: as('globexAdmin') })).json().keys).toEqual([]);
    expect((await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${apiKey.id}`, headers: as('globexAdmin') })).statusCode).toBe(404);
    expect((await execute(key)).statusCode).toBe(200);
    await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${apiKey.id}`, headers: as('admin') });
  });

  it('refuses non-admins, operators without the admin role, roles the creator cannot grant, and hostile bodies', async () => {
    expect((await createKey('alice', { user: 'x' })).statusCode).toBe(403);
    expect((await createKey('operator', { user: 'x' })).statusCode).toBe(403);
    expect((await app.inject({ url: '/v1/admin/keys', headers: as('alice') })).statusCode).toBe(403);
    // Roles: only held by the creator, named by the tenant, or approver; never "operator" powers.
    expect((await createKey('admin', { user: 'x', roles: ['superuser'] })).json()).toMatchObject({ statusCode: 403, code: 'TG_FORBIDDEN' });
    expect((await createKey('admin', { user: 'x', roles: ['operator'] })).statusCode).toBe(403);
    for (const payload of [
      { user: 'x', tenant: 'globex' },
      { user: 'x', operator: true },
      { user: '' },
      { user: '<script>alert(1)</script>' },
      { user: 'a'.repeat(129) },
      { user: 'x', roles: ['a b'] },
      { user: 'x', roles: Array.from({ length: 17 }, (_, i) => `r${i}`) },
      { roles: [] },
      '{"user":"x","__proto__":{"roles":["admin"]}}',
      'not json',
    ]) {
      const answer = await app.inject({ method: 'POST', url: '/v1/admin/keys', headers: { ...as('admin'), 'content-type': 'application/json' }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
      expect(answer.statusCode, JSON.stringify(payload)).toBe(400);
    }
    for (const id of ['../../etc', 'k_zz', 'x'.repeat(65), '%00']) {
      expect((await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${encodeURIComponent(id)}`, headers: as('admin') })).statusCode).toBeGreaterThanOrEqual(400);
    }
    const approverKey = (await createKey('admin', { user: 'appr', roles: ['approver', 'viewer'] })).json();
    expect(approverKey.apiKey.roles).toEqual(['approver', 'viewer']);
    await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${approverKey.apiKey.id}`, headers: as('admin') });
  });

  it('caps the keys per tenant (409) and a runtime key is never an operator', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await createKey('admin', { user: `bot${i}`, roles: ['admin'] })).json().apiKey.id);
    const over = await createKey('admin', { user: 'bot-extra' });
    expect(over.json()).toMatchObject({ statusCode: 409, code: 'TG_CONFLICT' });
    for (const id of ids) await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${id}`, headers: as('admin') });
    const { key } = (await createKey('admin', { user: 'ops', roles: ['admin'] })).json();
    expect((await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(key) })).statusCode).toBe(403);
  });

  it('refuses look-alike and forged runtime keys without touching the config keys', async () => {
    for (const token of ['tgk_', `tgk_${'0'.repeat(16)}_${'A'.repeat(43)}`, `tgk_${'0'.repeat(16)}_${'A'.repeat(44)}`]) {
      expect((await execute(token)).statusCode).toBe(401);
    }
    expect((await execute(API_KEY)).statusCode).toBe(200);
  });
});

describe('GET /v1/admin/audit and /v1/admin/stats', () => {
  it("shows the caller's tenant's recent events, filtered, and never another tenant's", async () => {
    const bob = await signToken({ sub: 'bob' });
    const gina = tokens.globexAdmin!;
    await execute(bob);
    await execute(gina);
    await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(bob), payload: { name: 'explode', arguments: {} } });
    const all = (await app.inject({ url: '/v1/admin/audit?limit=50', headers: as('admin') })).json().events;
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((e: { tenant: string }) => e.tenant === 'acme')).toBe(true);
    const bobs = (await app.inject({ url: '/v1/admin/audit?user=bob&tool=get_weather&outcome=ok', headers: as('admin') })).json().events;
    expect(bobs).toHaveLength(1);
    expect(bobs[0]).toMatchObject({ user: 'bob', tool: 'get_weather', outcome: 'ok' });
    expect(JSON.stringify(bobs[0])).not.toContain('Oslo'); // arguments only as their hash
    const failed = (await app.inject({ url: '/v1/admin/audit?outcome=TOOL_EXCEPTION', headers: as('admin') })).json().events;
    expect(failed.map((e: { tool: string }) => e.tool)).toEqual(['explode']);
    const future = (await app.inject({ url: `/v1/admin/audit?since=${new Date(Date.now() + 60_000).toISOString()}`, headers: as('admin') })).json().events;
    expect(future).toEqual([]);
    const globex = (await app.inject({ url: '/v1/admin/audit', headers: bearer(gina) })).json().events;
    expect(globex.map((e: { user: string }) => e.user)).toEqual(['gina']);
  });

  it('refuses non-admins and hostile query strings', async () => {
    expect((await app.inject({ url: '/v1/admin/audit', headers: as('alice') })).statusCode).toBe(403);
    expect((await app.inject({ url: '/v1/admin/stats', headers: as('alice') })).statusCode).toBe(403);
    for (const query of ['limit=0', 'limit=100000', 'since=yesterday', 'until=soon', 'outcome=<b>', 'tenant=', `user=${'u'.repeat(300)}`, 'limit=1&limit=2']) {
      expect((await app.inject({ url: `/v1/admin/audit?${query}`, headers: as('admin') })).statusCode, query).toBe(400);
    }
    // A tenant admin reads its own tenant only, whatever it asks for.
    for (const url of ['/v1/admin/audit?tenant=globex', '/v1/admin/stats?tenant=globex', '/v1/admin/audit?tenant=nope']) {
      const refused = await app.inject({ url, headers: as('admin') });
      expect([refused.statusCode, refused.json().code], url).toEqual([403, 'TG_FORBIDDEN']);
    }
    expect((await app.inject({ url: '/v1/admin/audit?tenant=acme', headers: as('admin') })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/admin/tenants', headers: as('admin') })).statusCode).toBe(403);
  });

  it("lets a global operator list the tenants and read any tenant's events and rollup (its own by default)", async () => {
    expect((await app.inject({ url: '/v1/admin/tenants', headers: as('operator') })).json()).toEqual({ tenants: ['acme', 'globex'] });
    const globex = (await app.inject({ url: '/v1/admin/audit?tenant=globex', headers: as('operator') })).json().events;
    expect(globex.length).toBeGreaterThan(0);
    expect(globex.every((e: { tenant: string }) => e.tenant === 'globex')).toBe(true);
    const own = (await app.inject({ url: '/v1/admin/audit', headers: as('operator') })).json().events;
    expect(own.every((e: { tenant: string }) => e.tenant === 'acme')).toBe(true);
    expect((await app.inject({ url: '/v1/admin/stats?tenant=globex', headers: as('operator') })).json().tools.map((t: { tool: string }) => t.tool)).toEqual(['get_weather']);
    const unknown = await app.inject({ url: '/v1/admin/audit?tenant=initech', headers: as('operator') });
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'TG_NOT_FOUND']);
  });

  it('pages back in time with until, and narrows to a time range with since', async () => {
    const newest = (await app.inject({ url: '/v1/admin/audit?limit=1', headers: as('admin') })).json().events;
    const all = (await app.inject({ url: '/v1/admin/audit?limit=1000', headers: as('admin') })).json().events as Array<{ time: number }>;
    const older = (await app.inject({ url: `/v1/admin/audit?limit=1000&until=${new Date(all.at(-1)!.time).toISOString()}`, headers: as('admin') })).json().events as Array<{ time: number }>;
    expect(older.every((e) => e.time <= all.at(-1)!.time)).toBe(true);
    expect(older.length).toBeGreaterThan(0);
    const range = (await app.inject({ url: `/v1/admin/audit?limit=1000&since=${new Date(newest[0].time).toISOString()}&until=${new Date(newest[0].time).toISOString()}`, headers: as('admin') })).json().events as Array<{ time: number }>;
    expect(range.length).toBeGreaterThan(0);
    expect(range.every((e) => e.time === newest[0].time)).toBe(true);
    const beforeAll = (await app.inject({ url: '/v1/admin/audit?until=2000-01-01T00:00:00Z', headers: as('admin') })).json().events;
    expect(beforeAll).toEqual([]);
  });

  it('rolls calls, errors and p95 per tool into 60 minutes for the Overview', async () => {
    const stats = (await app.inject({ url: '/v1/admin/stats', headers: as('admin') })).json();
    expect(stats.minutes).toHaveLength(60);
    const weather = stats.tools.find((t: { tool: string }) => t.tool === 'get_weather');
    expect(weather.calls.at(-1)).toBeGreaterThan(0);
    expect(weather.p95Ms.at(-1)).toEqual(expect.any(Number));
    const explode = stats.tools.find((t: { tool: string }) => t.tool === 'explode');
    expect(explode.errors.at(-1)).toBe(1);
    const globex = (await app.inject({ url: '/v1/admin/stats', headers: bearer(tokens.globexAdmin!) })).json();
    expect(globex.tools.map((t: { tool: string }) => t.tool)).toEqual(['get_weather']);
    expect(globex.tools[0].calls.at(-1)).toBe(1);
  });
});

describe('GET /v1/admin/upstreams', () => {
  const sandboxIn = async (target: FastifyInstance, token: string): Promise<boolean> =>
    ((await target.inject({ url: '/v1/admin/upstreams', headers: bearer(token) })).json().upstreams as Array<{ service: string }>).some((u) => u.service === 'builtins-sandbox');

  it("lists the built-ins' sandbox only where built-ins are on: to an operator when some tenant enables them, to an admin when its own does", async () => {
    expect(await sandboxIn(app, OPERATOR_KEY)).toBe(false);
    expect(await sandboxIn(app, API_KEY)).toBe(false);
    const withBuiltins = await buildTestApp(testConfig({ tenants: { acme: { builtins: 'all' }, globex: {} } }));
    try {
      expect(await sandboxIn(withBuiltins, OPERATOR_KEY)).toBe(true);
      expect(await sandboxIn(withBuiltins, API_KEY)).toBe(true);
      expect(await sandboxIn(withBuiltins, tokens.globexAdmin!)).toBe(false);
    } finally {
      await withBuiltins.close();
    }
  });

  it("counts users' connected MCP clients of the admin's own tenant only; an operator sees them all; another tenant is served meanwhile", async () => {
    const upstream = await startMcpUpstream([textTool('ping', () => 'pong')]);
    const shared = await buildTestApp(testConfig({ egress: { allow: ['127.0.0.1'] }, functions: VICTIM_FUNCTIONS, tenants: { acme: {}, globex: {}, [VICTIM_TENANT]: VICTIM_TENANT_CONFIG } }));
    try {
      const victim = await victimOf(shared);
      await expectVictimServedDuring(shared, victim, async (rounds) => {
        // Three globex users and one acme user connect a server of their own each.
        for (const [tenant, sub] of [['globex', 'g1'], ['globex', 'g2'], ['globex', 'g3'], ['acme', 'a1']] as const) {
          const token = await signToken({ sub, tenant });
          expect((await shared.inject({ method: 'PUT', url: `/v1/users/${sub}/mcp-servers/mine`, headers: bearer(token), payload: { url: upstream.url } })).statusCode).toBe(201);
          expect((await shared.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: `user_${sub}_tool_ping` } })).json()).toMatchObject({ ok: true });
        }
        const connectedClients = async (token: string): Promise<unknown> =>
          ((await shared.inject({ url: '/v1/admin/upstreams', headers: bearer(token) })).json().upstreams as Array<{ service: string; detail?: { connectedClients?: number } }>).find((u) => u.service === 'user-mcp')?.detail?.connectedClients;
        // The admins read the counts again and again (at most 200 times) while the victim is sampled.
        await repeatUntil(rounds, async () => {
          expect(await connectedClients(API_KEY)).toBe(1);
          expect(await connectedClients(tokens.globexAdmin!)).toBe(3);
          expect(await connectedClients(OPERATOR_KEY)).toBe(4);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }, { maxRepeats: 200 });
      });
    } finally {
      await shared.close();
      await upstream.close();
    }
  });
});

describe('GET /v1/admin/tools', () => {
  it("says why a tool of the tenant is missing from the admin's pool, for the caller's tenant only", async () => {
    const acme = (await app.inject({ url: '/v1/admin/tools', headers: as('admin') })).json();
    expect(acme.heldBack).toContainEqual({ name: 'write_note', source: 'function', reason: 'tool is not allowed for this tenant' });
    const globex = (await app.inject({ url: '/v1/admin/tools', headers: as('globexAdmin') })).json();
    expect(globex.heldBack.map((entry: { name: string }) => entry.name)).not.toContain('write_note');
    expect((await app.inject({ url: '/v1/admin/tools', headers: as('alice') })).statusCode).toBe(403);
  });
});

const REDIS_URL = testRedisUrl();
describe.skipIf(!REDIS_URL)('runtime keys on two replicas sharing Redis', () => {
  it('a key created on one replica works on the other, and a revocation holds on both at the next request', async () => {
    const prefix = `tg-test-keys:${randomBytes(6).toString('hex')}:`;
    const config = testConfig({ store: { kind: 'redis', url: REDIS_URL, prefix } });
    const [a, b] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
    try {
      const { key, apiKey } = (await createKey('admin', { user: 'shared-bot' }, a)).json();
      expect((await execute(key, b)).statusCode).toBe(200);
      expect((await execute(key, a)).statusCode).toBe(200);
      expect((await a.inject({ method: 'DELETE', url: `/v1/admin/keys/${apiKey.id}`, headers: as('admin') })).statusCode).toBe(204);
      expect((await execute(key, b)).statusCode).toBe(401);
      expect((await execute(key, a)).statusCode).toBe(401);
      // The audit copy is shared too: an event run on B is listed by A.
      const events = (await a.inject({ url: '/v1/admin/audit?user=shared-bot', headers: as('admin') })).json().events;
      expect(events.length).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await deleteRedisKeys(REDIS_URL!, prefix);
    }
  });
});
