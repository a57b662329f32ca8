/**
 * Shared state behind one interface: rate-limit counters, approvals, user-level MCP registrations, runtime
 * API keys, MCP definition pins, MCP session records, the recent-audit copy (circuit state is not here: it
 * stays per replica, src/pipeline/circuit-state.ts). Values are strings (JSON) so the memory and Redis
 * implementations behave alike; every operation that must be atomic across replicas is one method here,
 * never a read-then-write in a caller.
 */
export interface StateStore {
  readonly kind: 'memory' | 'redis';
  /** Whether the store is reachable now (a store without it is always reachable: it lives in this process). */
  readonly up?: () => boolean;
  /**
   * Start-up check: settles once the first connection attempt is decided (a store that is merely down is an
   * outage to ride out) and rejects when it can never succeed (e.g. an untrusted TLS certificate).
   */
  readonly verifyConnection?: () => Promise<void>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options?: { ttlMs?: number }): Promise<void>;
  /** Writes only when the key does not exist; true when written. */
  setIfAbsent(key: string, value: string, options?: { ttlMs?: number }): Promise<boolean>;
  /** Replaces the value only when it still equals `expected`; true when replaced (e.g. "run this approval once"). */
  compareAndSet(key: string, expected: string, value: string, options?: { ttlMs?: number }): Promise<boolean>;
  delete(key: string): Promise<boolean>;
  /** Every live key starting with `prefix`, with its value. */
  scan(prefix: string): Promise<Array<{ key: string; value: string }>>;
  /**
   * Atomic sliding-window hit: counts `weight` hits (default 1) unless they would take the window past
   * `limit`; refused hits are not counted. Cost is one step whatever the weight.
   */
  hitWindow(key: string, limit: number, windowMs: number, weight?: number): Promise<WindowHit>;
  /** Appends to a capped list (newest kept, at most `max` entries): a ring in memory, LPUSH + LTRIM in Redis. */
  pushCapped(key: string, value: string, max: number): Promise<void>;
  /** Up to `limit` entries of a capped list, newest first, after skipping the newest `offset` (default 0): one page. */
  recent(key: string, limit: number, offset?: number): Promise<string[]>;
  /**
   * Takes a bounded lease (e.g. an MCP session) in one atomic step: drops the expired leases of both
   * groups, makes room in `own` by ending its least recently renewed leases, refuses when `shared` is
   * still full, else writes the record and counts the lease in both groups. Cost is bounded by the
   * groups' sizes, never by the keyspace.
   */
  acquireLease(lease: LeaseRequest): Promise<LeaseGrant>;
  /** Restarts a lease's TTL (record and group scores) in one step; false unless its record equals `record.value`. */
  renewLease(lease: LeaseRef): Promise<boolean>;
  /** Ends a lease (record deleted, uncounted in its groups); false unless its record equals `record.value`. */
  releaseLease(lease: Omit<LeaseRef, 'ttlMs'>): Promise<boolean>;
  /**
   * Reads a lease group without changing it: how many leases are live, and the `limit` soonest to expire
   * (id and expiry, epoch ms), soonest first. Cost is bounded by the group's size, never by the keyspace.
   */
  readLeases(group: string, limit: number): Promise<LeaseCount>;
  /** Adds `member` to a sorted index (a Redis sorted set of equal scores: members in byte order). */
  indexAdd(key: string, member: string): Promise<void>;
  /** Removes `member` from a sorted index. */
  indexRemove(key: string, member: string): Promise<void>;
  /**
   * Up to `limit` members of a sorted index in byte order, strictly after `after` and starting with `prefix`
   * when given: one page (ZRANGEBYLEX), its cost bounded by the page, never by the index or the keyspace.
   */
  indexRange(key: string, page: IndexPage): Promise<string[]>;
  /**
   * Checks and adds to counters in one atomic step (budgets, docs/governance.md#budgets): a counter's usage is
   * the sum of its keys; when any counter with a `limit` would pass it by adding its positive `amount`, nothing
   * is added and the first such counter is named. Otherwise each amount (negative: a refund) is added to the
   * counter's first key, which expires at `expiresAt`, and each tally's member grows by its amount. All keys of
   * one charge share a hash slot. Cost is bounded by the keys named, never by the keyspace.
   */
  chargeCounters(charge: CounterCharge): Promise<CounterResult>;
  /** Up to `limit` members of a tally, largest first. */
  readTally(key: string, limit: number): Promise<Array<{ member: string; amount: number }>>;
  close(): Promise<void>;
}

export interface Counter {
  /** The keys summed; `amount` goes to the first. */
  keys: readonly string[];
  amount: number;
  /** Refuse the whole charge when usage + a positive amount would pass it; absent: never refuses. */
  limit?: number;
  /** Epoch ms the charged key expires at. */
  expiresAt: number;
}

/** A ranking by amount (top users, top tools): at most `keep` members, the smallest dropped beyond. */
export interface Tally {
  key: string;
  member: string;
  amount: number;
  expiresAt: number;
  keep: number;
}

export interface CounterCharge {
  counters: readonly Counter[];
  tallies?: readonly Tally[];
}

/** Each counter's usage after the charge, or (refused) as it stands, with the index of the counter refused. */
export type CounterResult = { charged: true; used: number[] } | { charged: false; refused: number; used: number[] };

export interface IndexPage {
  after?: string;
  prefix?: string;
  limit: number;
}

/** Leases counted against a bound: a sorted set of lease ids scored by expiry (memory: a map of the same). */
export interface LeaseGroup {
  key: string;
  limit: number;
}

export interface LeaseRequest {
  /** The lease id: its member in both groups. */
  id: string;
  /** The lease's own record (a string value under `key`), written with `ttlMs`. */
  record: { key: string; value: string };
  ttlMs: number;
  /**
   * The owner's leases: at `limit` its least recently renewed ones end (their records are `recordPrefix` +
   * id), or with `evict: false` the request is refused instead, like at `shared`'s limit.
   */
  own: LeaseGroup & { recordPrefix: string; evict?: boolean };
  /** Everyone's leases (e.g. the tenant's): at `limit` the request is refused, nobody else's lease ends. */
  shared: LeaseGroup;
  /**
   * The lease's side records, by suffix: written at `record.key` + suffix with the record's TTL, and gone
   * whenever it goes (expired, released, ended to make room: an ended lease's records at these suffixes too).
   */
  sides?: Record<string, string>;
}

/** A refusal names the group that was full: `own` only when `own.evict` is false. */
export type LeaseGrant = { granted: true; evicted: string[] } | { granted: false; full: 'own' | 'shared' };

export interface LeaseCount {
  count: number;
  soonest: Array<{ id: string; expiresAt: number }>;
}

export interface LeaseRef {
  id: string;
  /** The record and the value it must still hold (a lease presented at the wrong place is not touched). */
  record: { key: string; value: string };
  /** Every group that counts the lease. */
  groups: string[];
  ttlMs: number;
  /** The suffixes of its side records (LeaseRequest.sides): renewed and released with the record. */
  sides?: readonly string[];
}

export interface WindowHit {
  allowed: boolean;
  /** Hits in the window after this one (or at the limit when refused). */
  count: number;
  /** When refused: how long until a hit would be allowed. 0 when allowed. */
  retryAfterMs: number;
}
