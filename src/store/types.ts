/**
 * Shared state behind one interface: rate-limit counters, approvals, circuit state, user-level MCP
 * registrations. Values are strings (JSON) so the memory and Redis implementations behave alike; every
 * operation that must be atomic across replicas is one method here, never a read-then-write in a caller.
 */
export interface StateStore {
  readonly kind: 'memory' | 'redis';
  /** Whether the store is reachable now (a store without it is always reachable: it lives in this process). */
  readonly up?: () => boolean;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options?: { ttlMs?: number }): Promise<void>;
  /** Writes only when the key does not exist; true when written. */
  setIfAbsent(key: string, value: string, options?: { ttlMs?: number }): Promise<boolean>;
  /** Replaces the value only when it still equals `expected`; true when replaced (e.g. "run this approval once"). */
  compareAndSet(key: string, expected: string, value: string, options?: { ttlMs?: number }): Promise<boolean>;
  delete(key: string): Promise<boolean>;
  /** Every live key starting with `prefix`, with its value. */
  scan(prefix: string): Promise<Array<{ key: string; value: string }>>;
  /** Atomic sliding-window hit: counts one hit unless the window already holds `limit`. */
  hitWindow(key: string, limit: number, windowMs: number): Promise<WindowHit>;
  /** Appends to a capped list (newest kept, at most `max` entries): a ring in memory, LPUSH + LTRIM in Redis. */
  pushCapped(key: string, value: string, max: number): Promise<void>;
  /** Up to `limit` entries of a capped list, newest first, after skipping the newest `offset` (default 0): one page. */
  recent(key: string, limit: number, offset?: number): Promise<string[]>;
  close(): Promise<void>;
}

export interface WindowHit {
  allowed: boolean;
  /** Hits in the window after this one (or at the limit when refused). */
  count: number;
  /** When refused: how long until a hit would be allowed. 0 when allowed. */
  retryAfterMs: number;
}
