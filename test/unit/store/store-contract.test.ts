import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteIfUnchanged } from '../../../src/store/delete-if-unchanged.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import { deleteRedisKeys, testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test:${randomBytes(6).toString('hex')}:`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const implementations: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) implementations.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);

afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

describe.each(implementations)('the %s store', (_kind, make) => {
  const store = make();
  const ns = randomBytes(4).toString('hex') + ':';
  afterAll(() => store.close());

  it('sets, gets and deletes a value', async () => {
    expect(await store.get(`${ns}a`)).toBeNull();
    await store.set(`${ns}a`, 'one');
    expect(await store.get(`${ns}a`)).toBe('one');
    expect(await store.delete(`${ns}a`)).toBe(true);
    expect(await store.delete(`${ns}a`)).toBe(false);
    expect(await store.get(`${ns}a`)).toBeNull();
  });

  it('pages a sorted index in byte order, after a cursor and within a prefix, and forgets removed members', async () => {
    const index = `${ns}index`;
    for (const member of ['beta', 'alpha-2', 'alpha-10', 'gamma', 'alpha', 'beta']) await store.indexAdd(index, member);
    expect(await store.indexRange(index, { limit: 10 })).toEqual(['alpha', 'alpha-10', 'alpha-2', 'beta', 'gamma']);
    expect(await store.indexRange(index, { limit: 2 })).toEqual(['alpha', 'alpha-10']);
    expect(await store.indexRange(index, { after: 'alpha-10', limit: 2 })).toEqual(['alpha-2', 'beta']);
    expect(await store.indexRange(index, { prefix: 'alpha', limit: 10 })).toEqual(['alpha', 'alpha-10', 'alpha-2']);
    expect(await store.indexRange(index, { prefix: 'alpha', after: 'alpha-10', limit: 10 })).toEqual(['alpha-2']);
    expect(await store.indexRange(index, { prefix: 'beta', after: 'alpha', limit: 10 })).toEqual(['beta']);
    expect(await store.indexRange(index, { prefix: 'delta', limit: 10 })).toEqual([]);
    await store.indexRemove(index, 'alpha-10');
    await store.indexRemove(index, 'missing');
    expect(await store.indexRange(index, { after: 'alpha', limit: 10 })).toEqual(['alpha-2', 'beta', 'gamma']);
  });

  it('writes with setIfAbsent only once', async () => {
    expect(await store.setIfAbsent(`${ns}once`, 'first')).toBe(true);
    expect(await store.setIfAbsent(`${ns}once`, 'second')).toBe(false);
    expect(await store.get(`${ns}once`)).toBe('first');
  });

  it('replaces with compareAndSet only while the value still matches', async () => {
    await store.set(`${ns}cas`, 'pending');
    expect(await store.compareAndSet(`${ns}cas`, 'other', 'approved')).toBe(false);
    expect(await store.compareAndSet(`${ns}cas`, 'pending', 'approved')).toBe(true);
    expect(await store.compareAndSet(`${ns}cas`, 'pending', 'approved-again')).toBe(false);
    expect(await store.get(`${ns}cas`)).toBe('approved');
    expect(await store.compareAndSet(`${ns}missing`, 'pending', 'x')).toBe(false);
  });

  it('deletes a record only while it holds the value its writer read (deleteIfUnchanged)', async () => {
    await store.set(`${ns}emptied`, '[]');
    expect(await deleteIfUnchanged(store, `${ns}emptied`, '["bob"]')).toBe(false);
    expect(await store.get(`${ns}emptied`)).toBe('[]');
    expect(await deleteIfUnchanged(store, `${ns}emptied`, '[]')).toBe(true);
    expect(await store.get(`${ns}emptied`)).toBeNull();
    expect(await deleteIfUnchanged(store, `${ns}emptied`, '[]')).toBe(false);
  });

  it('lets exactly one of many concurrent compareAndSet calls win', async () => {
    await store.set(`${ns}race`, 'pending');
    const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => store.compareAndSet(`${ns}race`, 'pending', `by-${i}`)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('expires values written with a TTL, also through setIfAbsent and compareAndSet', async () => {
    await store.set(`${ns}ttl`, 'v', { ttlMs: 40 });
    expect(await store.setIfAbsent(`${ns}ttl2`, 'v', { ttlMs: 40 })).toBe(true);
    await store.set(`${ns}keep`, 'a', { ttlMs: 40 });
    expect(await store.compareAndSet(`${ns}keep`, 'a', 'b')).toBe(true); // keeps the old expiry
    await store.set(`${ns}forever`, 'v');
    await sleep(80);
    expect(await store.get(`${ns}ttl`)).toBeNull();
    expect(await store.get(`${ns}ttl2`)).toBeNull();
    expect(await store.get(`${ns}keep`)).toBeNull();
    expect(await store.get(`${ns}forever`)).toBe('v');
    expect(await store.setIfAbsent(`${ns}ttl`, 'again')).toBe(true);
  });

  it('scans live string keys under a prefix, sorted, without windows or other prefixes', async () => {
    await store.set(`${ns}scan:b`, '2');
    await store.set(`${ns}scan:a`, '1');
    await store.set(`${ns}scan:gone`, 'x', { ttlMs: 20 });
    await store.set(`${ns}scanx`, 'not under the prefix');
    await store.hitWindow(`${ns}scan:window`, 5, 10_000);
    await sleep(40);
    expect(await store.scan(`${ns}scan:`)).toEqual([
      { key: `${ns}scan:a`, value: '1' },
      { key: `${ns}scan:b`, value: '2' },
    ]);
  });

  it('treats glob characters in a scan prefix literally', async () => {
    await store.set(`${ns}g*[x]:1`, 'literal');
    await store.set(`${ns}gzz:1`, 'other');
    expect(await store.scan(`${ns}g*[x]:`)).toEqual([{ key: `${ns}g*[x]:1`, value: 'literal' }]);
  });

  it('allows `limit` hits per sliding window and then refuses with a retry hint', async () => {
    const key = `${ns}rl`;
    const hits = [];
    for (let i = 0; i < 4; i++) hits.push(await store.hitWindow(key, 3, 60_000));
    expect(hits.map((h) => [h.allowed, h.count])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
      [false, 3],
    ]);
    expect(hits[3]!.retryAfterMs).toBeGreaterThan(0);
    expect(hits[3]!.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('counts concurrent hits atomically', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => store.hitWindow(`${ns}burst`, 7, 60_000)));
    expect(results.filter((r) => r.allowed)).toHaveLength(7);
  });

  it('keeps the newest `max` entries of a capped list and pages them newest first', async () => {
    const key = `${ns}capped`;
    for (let i = 0; i < 12; i += 1) await store.pushCapped(key, `e${i}`, 10);
    expect(await store.recent(key, 3)).toEqual(['e11', 'e10', 'e9']);
    expect(await store.recent(key, 3, 3)).toEqual(['e8', 'e7', 'e6']);
    expect(await store.recent(key, 2, 8)).toEqual(['e3', 'e2']);
    expect(await store.recent(`${ns}none`, 5, 5)).toEqual([]);
  });

  it('reopens a window once its hits slide out', async () => {
    const key = `${ns}slide`;
    expect((await store.hitWindow(key, 1, 40)).allowed).toBe(true);
    expect((await store.hitWindow(key, 1, 40)).allowed).toBe(false);
    await sleep(70);
    expect((await store.hitWindow(key, 1, 40)).allowed).toBe(true);
  });

  it('bounds leases: evicts the owner\'s least recently renewed, refuses a full shared group, frees slots on release and expiry', async () => {
    const lease = (id: string, owner: string, ttlMs = 60_000) => ({
      id,
      record: { key: `${ns}lease:${owner}:${id}`, value: 'v' },
      ttlMs,
      own: { key: `${ns}own:${owner}`, limit: 2, recordPrefix: `${ns}lease:${owner}:` },
      shared: { key: `${ns}shared`, limit: 3 },
    });
    const ref = (id: string, owner: string, ttlMs = 60_000) => ({ id, record: { key: `${ns}lease:${owner}:${id}`, value: 'v' }, groups: [`${ns}own:${owner}`, `${ns}shared`], ttlMs });
    expect(await store.acquireLease(lease('a1', 'a'))).toEqual({ granted: true, evicted: [] });
    expect(await store.acquireLease(lease('a2', 'a'))).toEqual({ granted: true, evicted: [] });
    await sleep(5);
    expect(await store.renewLease(ref('a1', 'a'))).toBe(true);
    expect(await store.acquireLease(lease('a3', 'a'))).toEqual({ granted: true, evicted: ['a2'] });
    expect(await store.get(`${ns}lease:a:a2`)).toBeNull();
    expect(await store.renewLease(ref('a2', 'a'))).toBe(false);
    expect(await store.acquireLease(lease('b1', 'b', 40))).toEqual({ granted: true, evicted: [] });
    expect(await store.acquireLease(lease('c1', 'c'))).toEqual({ granted: false, full: 'shared' });
    expect(await store.get(`${ns}lease:c:c1`)).toBeNull();
    expect(await store.releaseLease({ ...ref('a3', 'a'), record: { key: `${ns}lease:a:a3`, value: 'other' } })).toBe(false);
    expect(await store.releaseLease(ref('a3', 'a'))).toBe(true);
    expect(await store.acquireLease(lease('c1', 'c'))).toEqual({ granted: true, evicted: [] });
    expect(await store.acquireLease(lease('c2', 'c'))).toEqual({ granted: false, full: 'shared' });
    await sleep(80); // b1 expired: its slot is free again
    expect(await store.acquireLease(lease('c2', 'c'))).toEqual({ granted: true, evicted: [] });
  });

  it('counts a weighted hit as that many hits in one step, refusing all of it when it does not fit', async () => {
    const key = `${ns}weighted`;
    expect(await store.hitWindow(key, 10, 60_000, 4)).toEqual({ allowed: true, count: 4, retryAfterMs: 0 });
    expect(await store.hitWindow(key, 10, 60_000, 6)).toEqual({ allowed: true, count: 10, retryAfterMs: 0 });
    const refused = await store.hitWindow(key, 10, 60_000, 1);
    expect(refused.allowed).toBe(false);
    expect(refused.count).toBe(10);
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
    // Refused whole, not counted in part; a weight past the limit never fits.
    const partial = `${ns}weighted-partial`;
    expect((await store.hitWindow(partial, 5, 60_000, 3)).allowed).toBe(true);
    expect(await store.hitWindow(partial, 5, 60_000, 3)).toMatchObject({ allowed: false, count: 3 });
    expect(await store.hitWindow(partial, 5, 60_000, 2)).toMatchObject({ allowed: true, count: 5 });
    expect(await store.hitWindow(`${ns}weighted-over`, 5, 60_000, 6)).toMatchObject({ allowed: false, count: 0, retryAfterMs: 60_000 });
    // More members than one command takes (the script adds them in chunks).
    expect(await store.hitWindow(`${ns}weighted-large`, 5000, 60_000, 2500)).toEqual({ allowed: true, count: 2500, retryAfterMs: 0 });
  });

  it("keeps a lease's side records with it: written with it, renewed with it, gone when it is released, evicted or expires", async () => {
    const lease = (id: string, ttlMs = 60_000) => ({
      id,
      record: { key: `${ns}side:${id}`, value: 'v' },
      ttlMs,
      own: { key: `${ns}side-own`, limit: 2, recordPrefix: `${ns}side:` },
      shared: { key: `${ns}side-shared`, limit: 100 },
      sides: { ':client': `client of ${id}` },
    });
    const ref = (id: string, ttlMs = 60_000) => ({ id, record: { key: `${ns}side:${id}`, value: 'v' }, groups: [`${ns}side-own`, `${ns}side-shared`], ttlMs, sides: [':client'] });
    expect(await store.acquireLease(lease('s1', 400))).toEqual({ granted: true, evicted: [] });
    expect(await store.get(`${ns}side:s1:client`)).toBe('client of s1');
    // Renewed with the lease: it outlives its first TTL.
    await sleep(250);
    expect(await store.renewLease(ref('s1', 400))).toBe(true);
    await sleep(250);
    expect(await store.get(`${ns}side:s1:client`)).toBe('client of s1');
    // Expires with the lease.
    await sleep(300);
    expect(await store.get(`${ns}side:s1`)).toBeNull();
    expect(await store.get(`${ns}side:s1:client`)).toBeNull();
    // Released with the lease.
    await store.acquireLease(lease('s2'));
    expect(await store.releaseLease(ref('s2'))).toBe(true);
    expect(await store.get(`${ns}side:s2:client`)).toBeNull();
    // Evicted with the lease.
    await store.acquireLease(lease('s3'));
    await store.acquireLease(lease('s4'));
    expect(await store.acquireLease(lease('s5'))).toEqual({ granted: true, evicted: ['s3'] });
    expect(await store.get(`${ns}side:s3:client`)).toBeNull();
    expect(await store.get(`${ns}side:s4:client`)).toBe('client of s4');
    expect(await store.get(`${ns}side:s5:client`)).toBe('client of s5');
  });

  it('refuses at a full own group when it may not evict, and counts a group without changing it', async () => {
    const lease = (id: string, owner: string, ttlMs = 60_000) => ({
      id,
      record: { key: `${ns}held:${owner}:${id}`, value: id },
      ttlMs,
      own: { key: `${ns}held-own:${owner}`, limit: 2, recordPrefix: `${ns}held:${owner}:`, evict: false },
      shared: { key: `${ns}held-shared`, limit: 3 },
    });
    expect(await store.acquireLease(lease('a1', 'a', 1000))).toEqual({ granted: true, evicted: [] });
    expect(await store.acquireLease(lease('a2', 'a'))).toEqual({ granted: true, evicted: [] });
    expect(await store.acquireLease(lease('a3', 'a'))).toEqual({ granted: false, full: 'own' });
    expect(await store.get(`${ns}held:a:a1`)).toBe('a1');
    expect(await store.acquireLease(lease('b1', 'b'))).toEqual({ granted: true, evicted: [] });
    expect(await store.acquireLease(lease('b2', 'b'))).toEqual({ granted: false, full: 'shared' });
    const counted = await store.readLeases(`${ns}held-shared`, 2);
    expect(counted.count).toBe(3);
    expect(counted.soonest.map((entry) => entry.id)).toEqual(['a1', 'a2']);
    expect(counted.soonest[0]!.expiresAt).toBeGreaterThan(Date.now() - 1000);
    expect(await store.readLeases(`${ns}held-none`, 5)).toEqual({ count: 0, soonest: [] });
    await sleep(1100); // a1 expired: no longer counted, and its owner may take another
    expect((await store.readLeases(`${ns}held-own:a`, 5)).soonest.map((entry) => entry.id)).toEqual(['a2']);
    expect(await store.acquireLease(lease('a3', 'a'))).toEqual({ granted: true, evicted: [] });
  });

  it('evicts the least recently used lease also when leases are taken and renewed within one millisecond', async () => {
    // Ids run against time order ('z' first, 'a' later), so a tie broken by id would evict the wrong lease.
    const lease = (id: string, owner: string) => ({
      id,
      record: { key: `${ns}tie:${owner}:${id}`, value: 'v' },
      ttlMs: 60_000,
      own: { key: `${ns}tie-own:${owner}`, limit: 2, recordPrefix: `${ns}tie:${owner}:` },
      shared: { key: `${ns}tie-shared:${owner}`, limit: 100 },
    });
    const ref = (id: string, owner: string) => ({ id, record: { key: `${ns}tie:${owner}:${id}`, value: 'v' }, groups: [`${ns}tie-own:${owner}`, `${ns}tie-shared:${owner}`], ttlMs: 60_000 });
    for (let round = 0; round < 20; round += 1) {
      const owner = `o${round}`;
      await store.acquireLease(lease('z', owner));
      await store.acquireLease(lease('m', owner));
      expect(await store.acquireLease(lease('a', owner))).toEqual({ granted: true, evicted: ['z'] });
      expect(await store.renewLease(ref('m', owner))).toBe(true);
      expect(await store.acquireLease(lease('b', owner))).toEqual({ granted: true, evicted: ['a'] });
    }
  });
});

describe.each(implementations)('the %s store\'s budget counters', (_kind, make) => {
  const store = make();
  const tag = `{${randomBytes(4).toString('hex')}}`;
  afterAll(() => store.close());
  const far = () => Date.now() + 60_000;

  it('charges every counter or none: the first counter its amount would take past its limit is named, and refunds are never refused', async () => {
    const a = `${tag}:a`;
    const b = [`${tag}:b:2`, `${tag}:b:1`];
    const charge = (amount: number) => store.chargeCounters({ counters: [{ keys: [a], amount: 1, limit: 3, expiresAt: far() }, { keys: b, amount, limit: 10, expiresAt: far() }] });
    expect(await charge(4)).toEqual({ charged: true, used: [1, 4] });
    expect(await charge(6)).toEqual({ charged: true, used: [2, 10] });
    expect(await charge(1)).toEqual({ charged: false, refused: 1, used: [2, 10] });
    expect(await store.chargeCounters({ counters: [{ keys: b, amount: -3, limit: 1, expiresAt: far() }] })).toEqual({ charged: true, used: [7] });
    // A counter sums all its keys (a rolling window's buckets) and adds to the first.
    expect(await store.chargeCounters({ counters: [{ keys: [b[1]!], amount: 2, expiresAt: far() }] })).toEqual({ charged: true, used: [2] });
    expect((await store.chargeCounters({ counters: [{ keys: b, amount: 0, expiresAt: far() }] })).used).toEqual([9]);
  });

  it('admits exactly `limit` of many concurrent charges', async () => {
    const key = `${tag}:race`;
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => store.chargeCounters({ counters: [{ keys: [key], amount: 1, limit: 25, expiresAt: far() }] })));
    expect(outcomes.filter((outcome) => outcome.charged)).toHaveLength(25);
  });

  it('expires a counter at its expiry and ranks a tally, keeping its largest members', async () => {
    const key = `${tag}:short`;
    await store.chargeCounters({ counters: [{ keys: [key], amount: 5, expiresAt: Date.now() + 60 }] });
    await sleep(120);
    expect((await store.chargeCounters({ counters: [{ keys: [key], amount: 0, expiresAt: far() }] })).used).toEqual([0]);
    const tally = `${tag}:tally`;
    for (const [member, amount] of [['alice', 3], ['bob', 1], ['carol', 5], ['alice', 4]] as const) {
      await store.chargeCounters({ counters: [], tallies: [{ key: tally, member, amount, expiresAt: far(), keep: 2 }] });
    }
    expect(await store.readTally(tally, 10)).toEqual([{ member: 'alice', amount: 7 }, { member: 'carol', amount: 5 }]);
    expect(await store.readTally(tally, 1)).toEqual([{ member: 'alice', amount: 7 }]);
  });
});

describe('the memory store clock', () => {
  it('expires lazily against an injected clock, with no timers', async () => {
    let t = 1_000;
    const store = createMemoryStore({ now: () => t });
    await store.set('k', 'v', { ttlMs: 100 });
    t += 99;
    expect(await store.get('k')).toBe('v');
    t += 1;
    expect(await store.get('k')).toBeNull();
    expect((await store.hitWindow('w', 1, 50)).allowed).toBe(true);
    const refused = await store.hitWindow('w', 1, 50);
    expect(refused).toEqual({ allowed: false, count: 1, retryAfterMs: 50 });
    t += 50;
    expect((await store.hitWindow('w', 1, 50)).allowed).toBe(true);
  });
});
