import type { CounterCharge, CounterResult, IndexPage, LeaseCount, LeaseGrant, LeaseRequest, StateStore, WindowHit } from './types.js';

const SWEEP_EVERY = 1000;

interface Entry {
  value: string;
  /** Epoch ms; undefined = no expiry. */
  expiresAt: number | undefined;
}

export interface MemoryStoreOptions {
  /** Clock, injectable for tests. */
  now?: () => number;
}

/**
 * The embedded store: one process, no timers. Expiry is lazy (checked on every read and during scans),
 * which matches what Redis does on access, so the shared contract tests hold for both.
 * Every method finishes its read-modify-write without awaiting, so each one is atomic in this process.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): StateStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  // Sliding windows live apart from string values: like Redis sorted sets, `get` never sees them.
  // Hits are appended in time order, so expired ones are always at the front: a head index drops them in
  // amortised O(1) per call instead of re-filtering the whole window (which grows with the limit).
  const windows = new Map<string, { hits: number[]; head: number; windowMs: number }>();
  // Capped lists (audit copies): appended in order, trimmed to `max` once they reach twice that, so a push
  // is amortised O(1) and memory stays within 2 × max entries per list.
  const lists = new Map<string, string[]>();
  // Lease groups (bounded MCP sessions): group key → lease id → expiry, like the Redis sorted sets.
  const leases = new Map<string, Map<string, number>>();
  // Sorted indexes: members kept sorted (binary-searched insert), like a Redis sorted set read BYLEX.
  const indexes = new Map<string, string[]>();
  // Budget counters and tallies (chargeCounters): numbers, apart from string values as Redis keeps INCRBY keys apart from nothing else, but cheaper.
  const counters = new Map<string, { value: number; expiresAt: number }>();
  const tallies = new Map<string, { members: Map<string, number>; expiresAt: number }>();
  let writes = 0;

  // Lazy expiry alone would keep keys that are never read again; every SWEEP_EVERY writes one pass drops them.
  const sweep = (): void => {
    if (++writes % SWEEP_EVERY !== 0) return;
    const at = now();
    for (const [key, entry] of entries) if (entry.expiresAt !== undefined && entry.expiresAt <= at) entries.delete(key);
    for (const [key, window] of windows) if ((window.hits.at(-1) ?? 0) <= at - window.windowMs) windows.delete(key);
    for (const key of [...leases.keys()]) liveGroup(key, at);
    for (const [key, counter] of counters) if (counter.expiresAt <= at) counters.delete(key);
    for (const [key, tally] of tallies) if (tally.expiresAt <= at) tallies.delete(key);
  };

  const counted = (key: string, at: number): number => {
    const counter = counters.get(key);
    return counter && counter.expiresAt > at ? counter.value : 0;
  };
  // Synchronous inside, like hitWindow: every counter is checked and charged in one turn.
  const chargeCounters = ({ counters: wanted, tallies: ranked = [] }: CounterCharge): CounterResult => {
    sweep();
    const at = now();
    const used = wanted.map((counter) => {
      let sum = 0;
      for (const key of counter.keys) sum += counted(key, at);
      return sum;
    });
    const refused = wanted.findIndex((counter, i) => counter.limit !== undefined && counter.amount > 0 && used[i]! + counter.amount > counter.limit);
    if (refused >= 0) return { charged: false, refused, used };
    wanted.forEach((counter, i) => {
      if (counter.amount === 0) return;
      const key = counter.keys[0]!;
      counters.set(key, { value: counted(key, at) + counter.amount, expiresAt: counter.expiresAt });
      used[i]! += counter.amount;
    });
    for (const { key, member, amount, expiresAt, keep } of ranked) {
      let tally = tallies.get(key);
      if (!tally || tally.expiresAt <= at) tallies.set(key, (tally = { members: new Map(), expiresAt }));
      tally.expiresAt = expiresAt;
      tally.members.set(member, (tally.members.get(member) ?? 0) + amount);
      if (tally.members.size > keep) {
        const smallest = [...tally.members].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))[0]!;
        tally.members.delete(smallest[0]);
      }
    }
    return { charged: true, used };
  };

  /** The group's unexpired leases (expired ones dropped; an emptied group is forgotten). */
  const liveGroup = (key: string, at: number): Map<string, number> => {
    const group = leases.get(key) ?? new Map<string, number>();
    for (const [id, expiresAt] of group) if (expiresAt <= at) group.delete(id);
    if (group.size === 0) leases.delete(key);
    return group;
  };
  // Re-inserted so that a Map's insertion order breaks ties of one millisecond as Redis does: newest last.
  const count = (key: string, id: string, expiresAt: number): void => {
    const group = leases.get(key) ?? new Map<string, number>();
    group.delete(id);
    leases.set(key, group.set(id, expiresAt));
  };

  // Synchronous inside, like hitWindow: the check and the add cannot interleave with another acquire.
  const acquireLease = (lease: LeaseRequest): LeaseGrant => {
    sweep();
    const at = now();
    const own = liveGroup(lease.own.key, at);
    const shared = liveGroup(lease.shared.key, at);
    const evict = Math.max(0, own.size - lease.own.limit + 1);
    if (evict > 0 && lease.own.evict === false) return { granted: false, full: 'own' };
    if (shared.size - evict >= lease.shared.limit) return { granted: false, full: 'shared' };
    const evicted = [...own].sort((a, b) => a[1] - b[1]).slice(0, evict).map(([id]) => id);
    const sides = Object.entries(lease.sides ?? {});
    for (const id of evicted) {
      own.delete(id);
      shared.delete(id);
      entries.delete(lease.own.recordPrefix + id);
      for (const [suffix] of sides) entries.delete(lease.own.recordPrefix + id + suffix);
    }
    const expiresAt = at + lease.ttlMs;
    entries.set(lease.record.key, { value: lease.record.value, expiresAt });
    for (const [suffix, value] of sides) entries.set(lease.record.key + suffix, { value, expiresAt });
    count(lease.own.key, lease.id, expiresAt);
    count(lease.shared.key, lease.id, expiresAt);
    return { granted: true, evicted };
  };

  const readLeases = (key: string, limit: number): LeaseCount => {
    const at = now();
    const live = [...(leases.get(key) ?? [])].filter(([, expiresAt]) => expiresAt > at);
    const soonest = live.sort((a, b) => a[1] - b[1]).slice(0, limit).map(([id, expiresAt]) => ({ id, expiresAt }));
    return { count: live.length, soonest };
  };

  /** Where `member` is, or would be inserted, in a sorted index. */
  const positionOf = (members: readonly string[], member: string): number => {
    let low = 0;
    let high = members.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (members[middle]! < member) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const indexRange = (key: string, { after, prefix = '', limit }: IndexPage): string[] => {
    const members = indexes.get(key) ?? [];
    const from = after !== undefined && after >= prefix ? positionOf(members, after) + (members[positionOf(members, after)] === after ? 1 : 0) : positionOf(members, prefix);
    const page: string[] = [];
    for (let i = from; i < members.length && page.length < limit; i += 1) {
      if (!members[i]!.startsWith(prefix)) break;
      page.push(members[i]!);
    }
    return page;
  };

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt !== undefined && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const expiryOf = (ttlMs: number | undefined): number | undefined => (ttlMs === undefined ? undefined : now() + ttlMs);

  // Synchronous inside: the whole read-modify-write finishes in one turn (see above).
  const hitWindow = (key: string, limit: number, windowMs: number, weight: number): WindowHit => {
    sweep();
    const at = now();
    let window = windows.get(key);
    if (!window) windows.set(key, (window = { hits: [], head: 0, windowMs }));
    window.windowMs = windowMs;
    const { hits } = window;
    while (window.head < hits.length && hits[window.head]! <= at - windowMs) window.head += 1;
    if (window.head > 1024 && window.head * 2 > hits.length) {
      hits.splice(0, window.head);
      window.head = 0;
    }
    const count = hits.length - window.head;
    if (count + weight > limit) {
      // Room for `weight` once the oldest `count + weight - limit` hits have left the window (never, past the limit).
      const retryAfterMs = weight > limit ? windowMs : Math.max(1, hits[window.head + count + weight - limit - 1]! + windowMs - at);
      return { allowed: false, count, retryAfterMs };
    }
    for (let i = 0; i < weight; i += 1) hits.push(at);
    return { allowed: true, count: count + weight, retryAfterMs: 0 };
  };

  return {
    kind: 'memory',
    async get(key) {
      return live(key)?.value ?? null;
    },
    async set(key, value, opts) {
      sweep();
      entries.set(key, { value, expiresAt: expiryOf(opts?.ttlMs) });
    },
    async setIfAbsent(key, value, opts) {
      if (live(key)) return false;
      sweep();
      entries.set(key, { value, expiresAt: expiryOf(opts?.ttlMs) });
      return true;
    },
    async compareAndSet(key, expected, value, opts) {
      const entry = live(key);
      if (!entry || entry.value !== expected) return false;
      // Without a new TTL the old expiry is kept (Redis SET … KEEPTTL).
      entries.set(key, { value, expiresAt: opts?.ttlMs === undefined ? entry.expiresAt : expiryOf(opts.ttlMs) });
      return true;
    },
    async delete(key) {
      const existed = live(key) !== undefined;
      entries.delete(key);
      return windows.delete(key) || existed;
    },
    async scan(prefix) {
      const found: Array<{ key: string; value: string }> = [];
      for (const key of [...entries.keys()]) {
        if (!key.startsWith(prefix)) continue;
        const entry = live(key);
        if (entry) found.push({ key, value: entry.value });
      }
      return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    async hitWindow(key, limit, windowMs, weight = 1) {
      return hitWindow(key, limit, windowMs, weight);
    },
    async pushCapped(key, value, max) {
      let list = lists.get(key);
      if (!list) lists.set(key, (list = []));
      list.push(value);
      if (list.length >= 2 * max) list.splice(0, list.length - max);
    },
    async recent(key, limit, offset = 0) {
      const list = lists.get(key) ?? [];
      const end = Math.max(0, list.length - offset);
      return list.slice(Math.max(0, end - limit), end).reverse();
    },
    async acquireLease(lease) {
      return acquireLease(lease);
    },
    async renewLease({ id, record, groups, ttlMs, sides = [] }) {
      if (live(record.key)?.value !== record.value) return false;
      const expiresAt = now() + ttlMs;
      entries.set(record.key, { value: record.value, expiresAt });
      for (const suffix of sides) {
        const side = live(record.key + suffix);
        if (side) side.expiresAt = expiresAt;
      }
      for (const key of groups) if (leases.get(key)?.has(id)) count(key, id, expiresAt);
      return true;
    },
    async releaseLease({ id, record, groups, sides = [] }) {
      if (live(record.key)?.value !== record.value) return false;
      entries.delete(record.key);
      for (const suffix of sides) entries.delete(record.key + suffix);
      for (const key of groups) leases.get(key)?.delete(id);
      return true;
    },
    async readLeases(group, limit) {
      return readLeases(group, limit);
    },
    async indexAdd(key, member) {
      let members = indexes.get(key);
      if (!members) indexes.set(key, (members = []));
      const at = positionOf(members, member);
      if (members[at] !== member) members.splice(at, 0, member);
    },
    async indexRemove(key, member) {
      const members = indexes.get(key);
      if (!members) return;
      const at = positionOf(members, member);
      if (members[at] === member) members.splice(at, 1);
      if (members.length === 0) indexes.delete(key);
    },
    async indexRange(key, page) {
      return indexRange(key, page);
    },
    async chargeCounters(charge) {
      return chargeCounters(charge);
    },
    async readTally(key, limit) {
      const tally = tallies.get(key);
      if (!tally || tally.expiresAt <= now()) return [];
      return [...tally.members].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit).map(([member, amount]) => ({ member, amount }));
    },
    async close() {
      counters.clear();
      tallies.clear();
      indexes.clear();
      entries.clear();
      windows.clear();
      lists.clear();
      leases.clear();
    },
  };
}
