// A tiny in-memory StateStore for tests of modules that only need get/set/scan/delete
// (src/store/memory.ts is built elsewhere; this one has no TTLs or windows to speak of).
import { createMemoryStore } from '../../src/store/memory.js';
import type { StateStore, WindowHit } from '../../src/store/types.js';
import { storeUnavailable } from '../../src/store/unavailable.js';

export function createTestStore(): StateStore & { readonly data: Map<string, string> } {
  const data = new Map<string, string>();
  // Leases (MCP sessions, the runtime key cap) are counted by the real memory store.
  const leases = createMemoryStore();
  return {
    kind: 'memory',
    data,
    async get(key) {
      return data.get(key) ?? null;
    },
    async set(key, value) {
      data.set(key, value);
    },
    async setIfAbsent(key, value) {
      if (data.has(key)) return false;
      data.set(key, value);
      return true;
    },
    async compareAndSet(key, expected, value) {
      if (data.get(key) !== expected) return false;
      data.set(key, value);
      return true;
    },
    async delete(key) {
      return data.delete(key);
    },
    async scan(prefix) {
      return [...data].filter(([key]) => key.startsWith(prefix)).map(([key, value]) => ({ key, value }));
    },
    async hitWindow(): Promise<WindowHit> {
      return { allowed: true, count: 1, retryAfterMs: 0 };
    },
    async pushCapped(key, value, max) {
      const list = [value, ...(JSON.parse(data.get(key) ?? '[]') as string[])].slice(0, max);
      data.set(key, JSON.stringify(list));
    },
    async recent(key, limit, offset = 0) {
      return (JSON.parse(data.get(key) ?? '[]') as string[]).slice(offset, offset + limit);
    },
    // Lease records are string values like any other (runtime keys list theirs by scan): mirrored into `data`.
    async acquireLease(lease) {
      const grant = await leases.acquireLease(lease);
      if (grant.granted) {
        data.set(lease.record.key, lease.record.value);
        for (const id of grant.evicted) data.delete(lease.own.recordPrefix + id);
      }
      return grant;
    },
    renewLease: (lease) => leases.renewLease(lease),
    readLeases: (group, limit) => leases.readLeases(group, limit),
    // Sorted indexes (the tenant list) are kept by the real memory store too.
    indexAdd: (key, member) => leases.indexAdd(key, member),
    indexRemove: (key, member) => leases.indexRemove(key, member),
    indexRange: (key, page) => leases.indexRange(key, page),
    // Budget counters are counted by the real memory store too.
    chargeCounters: (charge) => leases.chargeCounters(charge),
    readTally: (key, limit) => leases.readTally(key, limit),
    async releaseLease(lease) {
      const released = await leases.releaseLease(lease);
      if (released) data.delete(lease.record.key);
      // Counted in no group, it is a compare-and-delete of any record (src/store/delete-if-unchanged.ts).
      if (released || lease.groups.length > 0 || data.get(lease.record.key) !== lease.record.value) return released;
      return data.delete(lease.record.key);
    },
    async close() {
      data.clear();
      await leases.close();
    },
  };
}

/** A store that does not answer: every operation fails as the Redis store's do while Redis is down. */
export function unavailableStore(): StateStore {
  const fail = (operation: string) => () => Promise.reject(storeUnavailable(operation, new Error('Connection is closed.')));
  return {
    kind: 'redis',
    up: () => false,
    get: fail('get'),
    set: fail('set'),
    setIfAbsent: fail('setIfAbsent'),
    compareAndSet: fail('compareAndSet'),
    delete: fail('delete'),
    scan: fail('scan'),
    hitWindow: fail('hitWindow'),
    pushCapped: fail('pushCapped'),
    recent: fail('recent'),
    acquireLease: fail('acquireLease'),
    renewLease: fail('renewLease'),
    releaseLease: fail('releaseLease'),
    readLeases: fail('readLeases'),
    indexAdd: fail('indexAdd'),
    indexRemove: fail('indexRemove'),
    indexRange: fail('indexRange'),
    chargeCounters: fail('chargeCounters'),
    readTally: fail('readTally'),
    async close() {},
  };
}
