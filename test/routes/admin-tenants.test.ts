import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory.js';
import { createMemoryBus } from '../../src/store/bus.js';
import { createTenantRecords } from '../../src/tenants/records.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAuditLines } from '../helpers/audit-file.js';
import { API_KEY, bearer, buildTestApp, OPERATOR_KEY, signToken, testConfig } from '../helpers/build.js';

// The tenant API on one replica (memory store): create, use, patch, delete; ETags; validation; who may do what.
const store = createMemoryStore();
const auditPath = join(mkdtempSync(join(tmpdir(), 'tg-tenants-')), 'audit.log');
let app: FastifyInstance;
const operator = bearer(OPERATOR_KEY);
const yamlAdmin = bearer(API_KEY);

beforeAll(async () => {
  app = await buildTestApp(testConfig({ audit: { sink: 'file', path: auditPath }, tenancy: { tenantAdmins: 'narrow', compiledCacheSize: 50 } }), { store });
});
afterAll(async () => {
  await app?.close();
  await store.close();
});

const put = (id: string, payload: unknown, headers: Record<string, string> = {}, auth = operator) =>
  app.inject({ method: 'PUT', url: `/v1/admin/tenants/${id}`, headers: { ...auth, ...headers }, payload: payload as Record<string, unknown> });
const patch = (id: string, payload: unknown, headers: Record<string, string> = {}, auth = operator) =>
  app.inject({ method: 'PATCH', url: `/v1/admin/tenants/${id}`, headers: { ...auth, 'content-type': 'application/merge-patch+json', ...headers }, payload: JSON.stringify(payload) });
const get = (id: string, auth = operator) => app.inject({ method: 'GET', url: `/v1/admin/tenants/${id}`, headers: auth });
const del = (id: string, headers: Record<string, string> = {}, auth = operator) => app.inject({ method: 'DELETE', url: `/v1/admin/tenants/${id}`, headers: { ...auth, ...headers } });
const toolNames = async (token: string) => {
  const listed = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(token) });
  return listed.statusCode === 200 ? (listed.json().tools as Array<{ name: string }>).map((tool) => tool.name) : listed.statusCode;
};

describe('the tenant API', () => {
  it('takes a configuration as YAML (application/yaml), as it stands in the file, with the same checks as JSON', async () => {
    const yaml = (id: string, text: string) => app.inject({ method: 'PUT', url: `/v1/admin/tenants/${id}`, headers: { ...operator, 'content-type': 'application/yaml' }, payload: text });
    const created = await yaml('yaml-shop', 'tools:\n  allow: ["*"]\n  deny:\n    - get_weather\n');
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ revision: 1, config: { tools: { allow: ['*'], deny: ['get_weather'] } } });
    expect(await toolNames(await signToken({ tenant: 'yaml-shop', sub: 'y' }))).not.toContain('get_weather');
    // Not YAML, a duplicate key, a bad key, prototype poisoning, a scalar: 400, nothing stored.
    const refused = [
      ['tools: { allow: [\n', /invalid YAML/],
      ['tools: {}\ntools: {}\n', /invalid YAML/],
      ['tools: { allw: ["*"] }\n', /\/tenants\/yaml-bad\/tools/],
      ['__proto__: { polluted: true }\n', /./],
      ['just text\n', /./],
    ] as const;
    for (const [text, says] of refused) {
      const res = await yaml('yaml-bad', text);
      expect(res.statusCode, text).toBe(400);
      expect(res.json().message, text).toMatch(says);
    }
    expect((await get('yaml-bad')).statusCode).toBe(404);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await del('yaml-shop')).statusCode).toBe(204);
  });

  it('creates a tenant whose tokens work at once, patches it, and deletes it: its tokens are refused from then on', async () => {
    const user = await signToken({ tenant: 'shop', sub: 'ann' });
    expect(await toolNames(user)).toBe(403);

    const created = await put('shop', { tools: { allow: ['*'], deny: ['delete_*'] } }, { 'if-none-match': '*' });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe('/v1/admin/tenants/shop');
    expect(created.json()).toMatchObject({ id: 'shop', source: 'store', revision: 1, updatedBy: 'acme/ops', config: { tools: { deny: ['delete_*'] } } });
    const etag = created.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{24}"$/);
    expect(await toolNames(user)).toContain('get_weather');

    const patched = await patch('shop', { tools: { deny: ['get_weather'] } }, { 'if-match': etag });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ revision: 2, config: { tools: { allow: ['*'], deny: ['get_weather'] } } });
    expect(patched.headers.etag).not.toBe(etag);
    // The change reaches the next request: the tenant was compiled again.
    expect(await toolNames(user)).not.toContain('get_weather');

    const deleted = await del('shop', { 'if-match': patched.headers.etag as string });
    expect(deleted.statusCode).toBe(204);
    expect(await toolNames(user)).toBe(403);
    expect((await get('shop')).statusCode).toBe(404);

    // Created again, its ETag is a new one (revisions go on across a delete).
    const again = await put('shop', {});
    expect(again.statusCode).toBe(201);
    expect(again.json().revision).toBe(4);
    expect(again.headers.etag).not.toBe(etag);
    expect(await toolNames(user)).toContain('get_weather');

    const lines = (await readAuditLines(app, auditPath)).filter((line) => line.event === 'security' && String(line.kind).startsWith('tenant_') && line.target === 'shop');
    expect(lines.map((line) => line.kind)).toEqual(['tenant_created', 'tenant_changed', 'tenant_deleted', 'tenant_created']);
    // Under the tenant changed, the operator's own tenant only in the operator-only detail.
    expect(lines[1]).toMatchObject({ tenant: 'shop', user: 'ops', outcome: 'ok', detail: 'by acme/ops' });
    const acmeCopy = await app.inject({ method: 'GET', url: '/v1/admin/audit?limit=100', headers: yamlAdmin });
    expect(acmeCopy.body).not.toContain('shop');
    expect(String(lines[1]!.reason)).toMatch(/^patched to revision 2: before [0-9a-f]{32}, after [0-9a-f]{32}$/);
  });

  it('refuses a bad configuration with 400 naming the key, and stores nothing', async () => {
    const bad = await put('badco', { tools: { allow: 'everything' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'TG_CONFIG_INVALID' });
    expect(bad.json().message).toContain('/tenants/badco/tools/allow');
    const unknownKey = await put('badco', { tool: {} });
    expect(unknownKey.json().message).toContain('unknown key "tool"');
    const badService = await put('badco', { mcpServices: ['nowhere'] });
    expect(badService.statusCode).toBe(400);
    expect(badService.json().message).toContain('/tenants/badco/mcpServices');
    const badPolicy = await put('badco', { policies: { 'rate-limit': { limit: 'many' } } });
    expect(badPolicy.statusCode).toBe(400);
    const custom = await put('badco', { policies: { custom: [{ module: '/tmp/x.mjs', before: 'approval' }] } });
    expect(custom.statusCode).toBe(400);
    expect(custom.json().message).toContain('/tenants/badco/policies/custom');
    expect((await get('badco')).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/v1/admin/tenants?q=badco', headers: operator })).json().tenants).toEqual([]);
    // A bad patch leaves the tenant as it was.
    const made = await put('goodco', { mode: 'readonly' });
    const badPatch = await patch('goodco', { limits: { maxInFlight: 0 } });
    expect(badPatch.statusCode).toBe(400);
    expect(badPatch.json().message).toContain('/tenants/goodco/limits/maxInFlight');
    expect((await get('goodco')).headers.etag).toBe(made.headers.etag);
  });

  it('answers 412 to a stale If-Match, to If-None-Match: * on an existing tenant, and to one of two writes racing on one ETag', async () => {
    const made = await put('race', { mode: 'default' });
    const etag = made.headers.etag as string;
    expect((await put('race', {}, { 'if-none-match': '*' })).statusCode).toBe(412);
    expect((await patch('race', { mode: 'readonly' }, { 'if-match': '"stale"' })).statusCode).toBe(412);
    const [a, b] = await Promise.all([patch('race', { tools: { deny: ['a'] } }, { 'if-match': etag }), put('race', { tools: { deny: ['b'] } }, { 'if-match': etag })]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 412]);
    expect((a.statusCode === 412 ? a : b).json().code).toBe('TG_PRECONDITION_FAILED');
    expect((await del('race', { 'if-match': etag })).statusCode).toBe(412);
    expect((await get('race')).statusCode).toBe(200);
  });

  it('keeps file tenants and store tenants apart: a file id cannot be created, changed or deleted here', async () => {
    const read = await get('globex');
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: 'globex', source: 'file', revision: null });
    expect((await put('globex', {})).statusCode).toBe(409);
    expect((await put('globex', {})).json().message).toContain('configuration file');
    expect((await patch('globex', { mode: 'readonly' })).statusCode).toBe(409);
    expect((await del('globex')).statusCode).toBe(409);
  });

  it('lets a tenant admin read its own tenant and narrow it, never widen it, and answers another tenant as an unknown one', async () => {
    await put('team', { tools: { allow: ['get_*', 'create_*'], deny: [] }, limits: { maxInFlight: 8 }, roles: { viewer: { deny: ['create_*'] } } });
    const admin = bearer(await signToken({ tenant: 'team', sub: 'tina', roles: ['admin'] }));
    const member = bearer(await signToken({ tenant: 'team', sub: 'tom' }));
    expect((await get('team', admin)).statusCode).toBe(200);
    expect((await get('team', member)).statusCode).toBe(403);

    for (const widening of [{ tools: { allow: ['*'] } }, { limits: { maxInFlight: 9 } }, { roles: { viewer: null } }, { policies: { 'rate-limit': false } }, { bindings: { x: {} } }]) {
      const refused = await patch('team', widening, {}, admin);
      expect(refused.statusCode, JSON.stringify(widening)).toBe(403);
      expect(refused.json().message).toContain('/tenants/team/');
    }
    const narrowed = await patch('team', { tools: { deny: ['create_*'] }, limits: { maxInFlight: 4 } }, {}, admin);
    expect(narrowed.statusCode).toBe(200);
    expect(narrowed.json().updatedBy).toBe('team/tina');
    // Undoing its own narrowing is widening too: only the operator can.
    expect((await patch('team', { tools: { deny: [] } }, {}, admin)).statusCode).toBe(403);
    expect((await del('team', {}, admin)).statusCode).toBe(403);

    // Another tenant (file or store), and one that exists nowhere: the same answer, byte for byte.
    const answers = [];
    for (const id of ['globex', 'goodco', 'no-such-tenant']) {
      for (const reply of [await get(id, admin), await patch(id, { mode: 'readonly' }, {}, admin), await put(id, {}, {}, admin), await del(id, {}, admin)]) {
        answers.push({ status: reply.statusCode, body: reply.json() });
      }
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer)))).toEqual(new Set([JSON.stringify({ status: 404, body: { statusCode: 404, code: 'TG_NOT_FOUND', error: 'Not Found', message: 'no such tenant' } })]));
    // The file tenant's admin cannot list tenants either.
    expect((await app.inject({ method: 'GET', url: '/v1/admin/tenants', headers: yamlAdmin })).statusCode).toBe(403);
  });

  it('lists file and store tenants together, a page at a time, by prefix or substring', async () => {
    for (const id of ['list-a', 'list-b', 'list-c', 'other-list-d']) expect((await put(id, {})).statusCode).toBe(201);
    const page = async (query: string) => (await app.inject({ method: 'GET', url: `/v1/admin/tenants?${query}`, headers: operator })).json();
    const all = await page('');
    expect(all.tenants).toEqual([...all.tenants].sort());
    expect(all.tenants).toEqual(expect.arrayContaining(['acme', 'globex', 'list-a', 'other-list-d']));
    expect(all.next).toBeUndefined();
    const first = await page('q=list-&limit=2');
    expect(first).toEqual({ tenants: ['list-a', 'list-b'], next: 'list-b' });
    expect(await page(`q=list-&limit=2&cursor=${first.next}`)).toEqual({ tenants: ['list-c'] });
    expect((await page('q=list&match=substring')).tenants).toEqual(['list-a', 'list-b', 'list-c', 'other-list-d']);
    expect((await page('q=glo')).tenants).toEqual(['globex']);
  });

  it('keeps at most tenancy.compiledCacheSize tenants compiled under a sweep of 5,000 tenants, each still served', async () => {
    const records = createTenantRecords(store, createMemoryBus());
    const ids = Array.from({ length: 5000 }, (_, i) => `sweep-${String(i).padStart(4, '0')}`);
    for (const id of ids) await records.create(id, { tools: { deny: [`never_${id}`] } }, 'test/setup');
    let largest = 0;
    for (const id of ids) {
      const view = await app.gateway.loadTenant(id);
      expect(view?.id).toBe(id);
      largest = Math.max(largest, app.gateway.current().tenants.size);
    }
    expect(largest).toBeLessThanOrEqual(50);
    // An evicted tenant is compiled again on its next request, and served.
    expect(await toolNames(await signToken({ tenant: ids[0], sub: 'late' }))).toContain('get_weather');
    expect(app.gateway.current().tenants.size).toBeLessThanOrEqual(50);
  });
});
