import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createRuntimeKeys, type ApiKeyLive } from '../../../src/admin/api-keys.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import type { Principal } from '../../../src/call/principal.js';
import { deleteRedisKeys, testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test:${randomBytes(6).toString('hex')}:`;
const stores: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) stores.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);

afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const creator: Principal = Object.freeze({
  tenant: 'acme',
  user: 'root',
  roles: Object.freeze(['admin']),
  claims: Object.freeze({}),
  credential: Object.freeze({ kind: 'apiKey', id: 'ci', sha256: 'a'.repeat(64) }),
});
const always: ApiKeyLive = () => true;

describe('runtime API keys', () => {
  it('holds the per-tenant cap under concurrent creates (check-then-create race)', async () => {
    const keys = createRuntimeKeys({ store: createMemoryStore(), maxPerTenant: () => 2, apiKeyLive: always });
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => keys.create(creator, { user: `bot${i}`, roles: [] })));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').length).toBeLessThanOrEqual(2);
    expect((await keys.list('acme')).length).toBeLessThanOrEqual(2);
    // Withdrawn keys leave nothing behind: one by one, the tenant fills up to exactly the cap.
    for (let i = 0; i < 5 && (await keys.list('acme')).length < 2; i += 1) await keys.create(creator, { user: 'next', roles: [] });
    await expect(keys.create(creator, { user: 'over', roles: [] })).rejects.toMatchObject({ code: 'LIMIT' });
  });

  it('refuses a key once the config key that minted it is gone, and lets it back when that key is (a reload undone)', async () => {
    let live = true;
    const seen: Array<{ tenant: string; id: string; sha256: string; user: string }> = [];
    const keys = createRuntimeKeys({
      store: createMemoryStore(),
      maxPerTenant: () => 10,
      apiKeyLive: (tenant, issuer) => {
        seen.push({ tenant, id: issuer.id, sha256: issuer.sha256, user: issuer.user });
        return live;
      },
    });
    const { key } = await keys.create(creator, { user: 'bot', roles: [] });
    expect((await keys.verify(key))?.user).toBe('bot');
    expect(seen.at(-1)).toEqual({ tenant: 'acme', id: 'ci', sha256: 'a'.repeat(64), user: 'root' });
    live = false;
    expect(await keys.verify(key)).toBeUndefined();
    live = true;
    expect((await keys.verify(key))?.user).toBe('bot');
  });

  it('ends every key below a revoked one, however deep, and removes them from the listing', async () => {
    const keys = createRuntimeKeys({ store: createMemoryStore(), maxPerTenant: () => 10, apiKeyLive: always });
    const deputy = await keys.create(creator, { user: 'deputy', roles: ['admin'] });
    const deputyPrincipal = (await keys.verify(deputy.key))!;
    const child = await keys.create(deputyPrincipal, { user: 'child', roles: ['admin'] });
    const grandchild = await keys.create((await keys.verify(child.key))!, { user: 'grandchild', roles: [] });
    const sibling = await keys.create(creator, { user: 'sibling', roles: [] });
    expect((await keys.verify(grandchild.key))?.credential).toMatchObject({ kind: 'runtimeKey', issuers: [{ user: 'child' }, { user: 'deputy' }, { user: 'root', kind: 'apiKey' }] });

    await keys.revoke('acme', deputy.record.id);
    for (const { key } of [deputy, child, grandchild]) expect(await keys.verify(key)).toBeUndefined();
    expect((await keys.verify(sibling.key))?.user).toBe('sibling');
    expect((await keys.list('acme')).map((k) => k.user)).toEqual(['sibling']);
  });

  it('still lists and revokes a key whose index record was written before the tenant became a Cluster hash tag', async () => {
    const store = createMemoryStore();
    const keys = createRuntimeKeys({ store, maxPerTenant: () => 10, apiKeyLive: always });
    const old = await keys.create(creator, { user: 'old-bot', roles: [] });
    // Move its index record where earlier versions wrote it (apikeys:<tenant>:<id>, a plain key).
    const sha256 = (await store.get(`apikeys:{acme}:${old.record.id}`))!;
    await store.releaseLease({ id: old.record.id, record: { key: `apikeys:{acme}:${old.record.id}`, value: sha256 }, groups: ['apikey-count:{acme}'] });
    await store.set(`apikeys:acme:${old.record.id}`, sha256);
    expect((await keys.list('acme')).map((k) => k.user)).toEqual(['old-bot']);
    await keys.revoke('acme', old.record.id);
    expect(await keys.verify(old.key)).toBeUndefined();
    expect(await keys.list('acme')).toEqual([]);
    expect(await store.get(`apikeys:acme:${old.record.id}`)).toBeNull();
  });

  it('refuses a key minted by a runtime key that expired, and a key past its own expiry', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const store = createMemoryStore({ now: () => t });
    const keys = createRuntimeKeys({ store, maxPerTenant: () => 10, apiKeyLive: always, now: () => t });
    const shortAdmin = await keys.create(creator, { user: 'temp-admin', roles: ['admin'], expiresInSec: 60 });
    expect(shortAdmin.record.expiresAt).toBe('2026-01-01T00:01:00.000Z');
    const minted = await keys.create((await keys.verify(shortAdmin.key))!, { user: 'bot', roles: [] });
    expect(minted.record.expiresAt).toBeNull();
    t += 59_000;
    expect((await keys.verify(minted.key))?.user).toBe('bot');
    t += 1_000;
    expect(await keys.verify(shortAdmin.key)).toBeUndefined();
    expect(await keys.verify(minted.key)).toBeUndefined();
  });

  it('writes a key\'s last use at most once a minute, and again once the minute is over', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const store = createMemoryStore({ now: () => t });
    const keys = createRuntimeKeys({ store, maxPerTenant: () => 10, apiKeyLive: always, now: () => t });
    const { key, record } = await keys.create(creator, { user: 'bot', roles: [] });
    const lastUsed = () => store.get(`apikey-used:acme:${record.id}`);
    await keys.verify(key);
    await vi.waitFor(async () => expect(await lastUsed()).toBe('2026-01-01T00:00:00.000Z'));
    t += 59_999;
    await keys.verify(key);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await lastUsed()).toBe('2026-01-01T00:00:00.000Z');
    t += 1;
    await keys.verify(key);
    await vi.waitFor(async () => expect(await lastUsed()).toBe('2026-01-01T00:01:00.000Z'));
  });

  it('caps the chain of keys minting keys, and refuses to mint from a principal without a credential', async () => {
    const keys = createRuntimeKeys({ store: createMemoryStore(), maxPerTenant: () => 10, apiKeyLive: always });
    let principal = creator;
    for (let depth = 0; depth < 4; depth += 1) principal = (await keys.verify((await keys.create(principal, { user: `admin${depth}`, roles: ['admin'] })).key))!;
    await expect(keys.create(principal, { user: 'too-deep', roles: [] })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const rebuilt: Principal = { tenant: 'acme', user: 'root', roles: ['admin'], claims: {} };
    await expect(keys.create(rebuilt, { user: 'x', roles: [] })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

const CAP = 5;

describe.each(stores)('the runtime key cap on the %s store', (_kind, make) => {
  const store = make();
  afterAll(() => store.close());

  it('is reached exactly by 40 concurrent creates after a cascade revoke emptied the tenant', async () => {
    const tenant = `t-${randomBytes(4).toString('hex')}`;
    const tenantAdmin = { ...creator, tenant };
    const keys = createRuntimeKeys({ store, maxPerTenant: () => CAP, apiKeyLive: always });
    // An admin key that minted keys up to the cap, then revoked with everything below it.
    const deputy = await keys.create(tenantAdmin, { user: 'deputy', roles: ['admin'] });
    const deputyPrincipal = (await keys.verify(deputy.key))!;
    for (let i = 0; i < CAP - 1; i += 1) await keys.create(deputyPrincipal, { user: `minted${i}`, roles: [] });
    await expect(keys.create(tenantAdmin, { user: 'over', roles: [] })).rejects.toMatchObject({ code: 'LIMIT' });
    await keys.revoke(tenant, deputy.record.id);
    expect(await keys.list(tenant)).toEqual([]);

    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => keys.create(tenantAdmin, { user: `bot${i}`, roles: [] })));
    const created = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as { code?: string }] : []));
    expect(created).toHaveLength(CAP);
    expect(refused.every((reason) => reason.code === 'LIMIT')).toBe(true);
    expect(await keys.list(tenant)).toHaveLength(CAP);
    // Revoking one frees exactly one place.
    await keys.revoke(tenant, (await keys.list(tenant))[0]!.id);
    const again = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => keys.create(tenantAdmin, { user: `late${i}`, roles: [] })));
    expect(again.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
  });

  it('frees the place of a key whose revocation stopped after its lookup record (seen by the next listing)', async () => {
    const tenant = `t-${randomBytes(4).toString('hex')}`;
    const tenantAdmin = { ...creator, tenant };
    const keys = createRuntimeKeys({ store, maxPerTenant: () => 2, apiKeyLive: always });
    const first = await keys.create(tenantAdmin, { user: 'one', roles: [] });
    await keys.create(tenantAdmin, { user: 'two', roles: [] });
    await expect(keys.create(tenantAdmin, { user: 'three', roles: [] })).rejects.toMatchObject({ code: 'LIMIT' });
    // What a replica that died half way through a revocation leaves: the index entry without its lookup record.
    await store.delete(`apikey:${createHash('sha256').update(first.key).digest('hex')}`);
    expect((await keys.list(tenant)).map((key) => key.user)).toEqual(['two']);
    await expect(keys.create(tenantAdmin, { user: 'three', roles: [] })).resolves.toMatchObject({ record: { user: 'three' } });
  });
});
