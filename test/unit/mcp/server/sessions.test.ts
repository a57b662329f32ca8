import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createMcpSessions } from '../../../../src/mcp/server/sessions.js';
import { createMemoryStore } from '../../../../src/store/memory.js';
import { createRedisStore } from '../../../../src/store/redis.js';
import type { StateStore } from '../../../../src/store/types.js';
import type { Principal } from '../../../../src/call/principal.js';
import { deleteRedisKeys, testRedisUrl } from '../../../helpers/redis.js';

const principal = (tenant: string, user: string): Principal => ({ tenant, user, roles: [], claims: {} });
const limits = { idleTimeoutMs: 60_000, maxPerPrincipal: 2, maxPerTenant: 3 };
const REDIS_URL = testRedisUrl();
const prefix = `tg-test-sessions:${randomBytes(6).toString('hex')}:`;

/** The store's operations, counted; `scan` fails, as nothing on a request path may walk the keyspace. */
function counted(inner: StateStore): { store: StateStore; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, name: keyof StateStore) {
      const value = target[name];
      if (typeof value !== 'function') return value;
      return (...args: never[]) => {
        calls.push(String(name));
        if (name === 'scan') throw new Error('scan on a request path');
        return (value as (...a: never[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

describe('MCP session records', () => {
  it('forget a session once it went unused for idleTimeoutMs, and keep one that is used', async () => {
    let now = 1_000_000;
    const sessions = createMcpSessions(createMemoryStore({ now: () => now }));
    const alice = principal('acme', 'alice');
    const used = (await sessions.create(alice, undefined, limits)).id;
    const idle = (await sessions.create(alice, undefined, limits)).id;
    now += 40_000;
    expect(await sessions.resume(alice, used, undefined, limits)).toBe(true);
    now += 40_000;
    expect(await sessions.resume(alice, used, undefined, limits)).toBe(true);
    expect(await sessions.resume(alice, idle, undefined, limits)).toBe(false);
  });

  it("count a session kept in use past its first idle timeout against the tenant's bound", async () => {
    let now = 1_000_000;
    const sessions = createMcpSessions(createMemoryStore({ now: () => now }));
    const one = { ...limits, maxPerTenant: 1 };
    const alice = principal('acme', 'alice');
    const { id } = await sessions.create(alice, undefined, one);
    for (let i = 0; i < 3; i += 1) {
      now += 40_000;
      expect(await sessions.resume(alice, id, undefined, one)).toBe(true);
    }
    await expect(sessions.create(principal('acme', 'bob'), undefined, one)).rejects.toMatchObject({ code: 'TG_OVERLOADED' });
    now += 60_000;
    expect((await sessions.create(principal('acme', 'bob'), undefined, one)).ended).toEqual([]);
  });

  it('end only the principal\'s least recently used session when it is at its own bound', async () => {
    let now = 0;
    const sessions = createMcpSessions(createMemoryStore({ now: () => now }));
    const alice = principal('acme', 'alice');
    const first = (await sessions.create(alice, undefined, limits)).id;
    now += 1;
    const second = (await sessions.create(alice, undefined, limits)).id;
    now += 1;
    // The older session is in use: the idle one ends instead.
    expect(await sessions.resume(alice, first, undefined, limits)).toBe(true);
    now += 1;
    const third = await sessions.create(alice, undefined, limits);
    expect(third.ended).toEqual([second]);
    expect(await sessions.resume(alice, second, undefined, limits)).toBe(false);
    expect(await sessions.resume(alice, first, undefined, limits)).toBe(true);
  });

  it('find nothing for another principal, another endpoint or a malformed id, and let only the owner end it', async () => {
    const sessions = createMcpSessions(createMemoryStore());
    const alice = principal('acme', 'alice');
    const { id } = await sessions.create(alice, 'echoes', limits);
    expect(await sessions.resume(principal('acme', 'bob'), id, 'echoes', limits)).toBe(false);
    expect(await sessions.resume(principal('globex', 'alice'), id, 'echoes', limits)).toBe(false);
    expect(await sessions.resume(alice, id, undefined, limits)).toBe(false);
    expect(await sessions.resume(alice, `${id}*`, 'echoes', limits)).toBe(false);
    expect(await sessions.end(principal('acme', 'bob'), id, 'echoes')).toBe(false);
    expect(await sessions.end(alice, id, undefined)).toBe(false);
    expect(await sessions.end(alice, id, 'echoes')).toBe(true);
    expect(await sessions.resume(alice, id, 'echoes', limits)).toBe(false);
  });
});

const stores: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) stores.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);
afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

describe.each(stores)('MCP session bounds on the %s store', (_kind, make) => {
  const inner = make();
  const { store, calls } = counted(inner);
  const sessions = createMcpSessions(store);
  afterAll(() => inner.close());

  it('let exactly maxPerTenant of many concurrent initializes of one tenant through, and refuse the rest', async () => {
    const tenant = `t-${randomBytes(4).toString('hex')}`;
    const bound = { idleTimeoutMs: 60_000, maxPerPrincipal: 5, maxPerTenant: 7 };
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => sessions.create(principal(tenant, `user-${i}`), undefined, bound)));
    const made = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(made).toHaveLength(7);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome.reason as { code: string }).code)).toEqual(Array(23).fill('TG_OVERLOADED'));
    // One principal's own bound holds under concurrency too: its oldest end, never more than the bound live.
    const alice = principal(`${tenant}-own`, 'alice');
    const mine = await Promise.all(Array.from({ length: 12 }, () => sessions.create(alice, undefined, bound)));
    const live = await Promise.all(mine.map(({ id }) => sessions.resume(alice, id, undefined, bound)));
    expect(live.filter(Boolean)).toHaveLength(5);
    expect(mine.flatMap(({ ended }) => ended).sort()).toEqual(mine.filter((_, i) => !live[i]).map(({ id }) => id).sort());
  });

  it('free a tenant slot when a session ends, and never scan the store', async () => {
    const tenant = `t-${randomBytes(4).toString('hex')}`;
    const bound = { idleTimeoutMs: 60_000, maxPerPrincipal: 1, maxPerTenant: 1 };
    const { id } = await sessions.create(principal(tenant, 'alice'), 'echoes', bound);
    await expect(sessions.create(principal(tenant, 'bob'), undefined, bound)).rejects.toMatchObject({ code: 'TG_OVERLOADED' });
    expect(await sessions.end(principal(tenant, 'alice'), id, 'echoes')).toBe(true);
    expect((await sessions.create(principal(tenant, 'bob'), undefined, bound)).id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(calls).not.toContain('scan');
  });

  it('resume a session with one store operation that checks and restarts it together', async () => {
    const alice = principal(`t-${randomBytes(4).toString('hex')}`, 'alice');
    const { id } = await sessions.create(alice, undefined, limits);
    calls.length = 0;
    expect(await sessions.resume(alice, id, undefined, limits)).toBe(true);
    expect(await sessions.resume(principal(alice.tenant, 'bob'), id, undefined, limits)).toBe(false);
    expect(calls).toEqual(['renewLease', 'renewLease']);
  });
});
