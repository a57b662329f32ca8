// Connected user-level MCP clients, one per (tenant, sub, serviceId): opened lazily, shared by
// concurrent callers while connecting, dropped after an idle period, and bounded in number (the
// least recently used is closed first) so many users cannot exhaust sockets or memory. The bound, the
// order and the idle expiry are lru-cache's (`ttl` renewed on every hit); closing is its `dispose`.
import { LRUCache } from 'lru-cache';

export interface ClientCacheOptions<T> {
  maxEntries: number;
  idleMs: number;
  close: (value: T) => Promise<void>;
  now?: () => number;
}

export interface ClientCache<T> {
  /**
   * The cached value for `key`, opened with `open` when missing or when `fingerprint` changed (the
   * registration was replaced). A failed open is not cached.
   */
  get(key: string, fingerprint: string, open: () => Promise<T>): Promise<T>;
  /** Closes and forgets one entry (e.g. after a transport error or a DELETE). */
  evict(key: string): Promise<void>;
  /** Like evict, but only while `value` is still the entry for `key` (a late close of a replaced client is ignored). */
  evictIfCurrent(key: string, value: T): Promise<void>;
  /** Closes every entry whose key starts with `prefix`. */
  evictPrefix(prefix: string): Promise<void>;
  /** Closes entries unused for `idleMs`; called by a timer, and directly by tests. */
  evictIdle(): Promise<void>;
  readonly size: number;
  /** Entries whose key starts with `prefix` (at most `maxEntries` are looked at). */
  countPrefix(prefix: string): number;
  /** The entry for `key` once it finished opening, without counting as a use (recency and idle time stay). */
  peek(key: string): T | undefined;
  closeAll(): Promise<void>;
}

interface Entry<T> {
  fingerprint: string;
  value: Promise<T>;
  resolved?: T;
}

export function createClientCache<T>(options: ClientCacheOptions<T>): ClientCache<T> {
  // The closes that lru-cache's (synchronous) dispose started during one operation, so that the operation
  // can wait for them: a caller that evicts a client expects it closed when evict returns.
  let closing: Array<Promise<void>> | undefined;

  const closeEntry = async (entry: Entry<T>): Promise<void> => {
    try {
      await options.close(await entry.value);
    } catch {
      // A client that failed to open or to close has nothing left to release.
    }
  };

  const entries = new LRUCache<string, Entry<T>>({
    max: options.maxEntries,
    ttl: options.idleMs,
    updateAgeOnGet: true,
    ttlResolution: 0, // read the clock on every check: the idle cut-off is exact, also under a test clock
    ...(options.now ? { perf: { now: options.now } } : {}),
    dispose: (entry) => {
      const closed = closeEntry(entry);
      closing?.push(closed);
    },
  });

  /** Runs `change` and waits for every client it made lru-cache drop to be closed. */
  async function closingAfter(change: () => void): Promise<void> {
    const outer = closing;
    const started: Array<Promise<void>> = [];
    closing = started;
    try {
      change();
    } finally {
      closing = outer;
    }
    await Promise.all(started);
  }

  const evict = (key: string): Promise<void> => closingAfter(() => entries.delete(key));

  async function get(key: string, fingerprint: string, open: () => Promise<T>): Promise<T> {
    const existing = entries.get(key);
    if (existing && existing.fingerprint === fingerprint) return existing.value;
    if (existing) await evict(key);
    const entry: Entry<T> = { fingerprint, value: open() };
    entry.value.then(
      (value) => {
        entry.resolved = value;
      },
      () => {
        if (entries.peek(key, { allowStale: true }) === entry) entries.delete(key);
      },
    );
    // Past `maxEntries`, the least recently used client is dropped (and closed) by this set.
    await closingAfter(() => entries.set(key, entry));
    return entry.value;
  }

  return {
    get,
    evict,
    async evictIfCurrent(key, value) {
      if (entries.peek(key, { allowStale: true })?.resolved === value) await evict(key);
    },
    evictPrefix: (prefix) =>
      closingAfter(() => {
        entries.purgeStale(); // a user's DELETE closes an idle client now, not at the next sweep
        for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
      }),
    evictIdle: () => closingAfter(() => entries.purgeStale()),
    get size() {
      return entries.size;
    },
    countPrefix(prefix) {
      let count = 0;
      for (const key of entries.keys()) if (key.startsWith(prefix)) count += 1;
      return count;
    },
    peek: (key) => entries.peek(key)?.resolved,
    closeAll: () => closingAfter(() => entries.clear()),
  };
}
