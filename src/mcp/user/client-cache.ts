// Connected user-level MCP clients, one per (tenant, sub, serviceId): opened lazily, shared by
// concurrent callers while connecting, dropped after an idle period, and bounded in number (the
// least recently used is closed first) so many users cannot exhaust sockets or memory.

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
  closeAll(): Promise<void>;
}

interface Entry<T> {
  fingerprint: string;
  value: Promise<T>;
  resolved?: T;
  lastUsed: number;
}

export function createClientCache<T>(options: ClientCacheOptions<T>): ClientCache<T> {
  const entries = new Map<string, Entry<T>>();
  const now = options.now ?? Date.now;

  const closeEntry = async (entry: Entry<T>): Promise<void> => {
    try {
      await options.close(await entry.value);
    } catch {
      // A client that failed to open or to close has nothing left to release.
    }
  };

  async function evict(key: string): Promise<void> {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    await closeEntry(entry);
  }

  async function get(key: string, fingerprint: string, open: () => Promise<T>): Promise<T> {
    const existing = entries.get(key);
    if (existing && existing.fingerprint === fingerprint) {
      // Re-insert: Map order is the LRU order.
      entries.delete(key);
      existing.lastUsed = now();
      entries.set(key, existing);
      return existing.value;
    }
    if (existing) await evict(key);
    const entry: Entry<T> = { fingerprint, value: open(), lastUsed: now() };
    entries.set(key, entry);
    entry.value.then(
      (value) => {
        entry.resolved = value;
      },
      () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    );
    while (entries.size > options.maxEntries) {
      const oldest = entries.keys().next().value as string;
      await evict(oldest);
    }
    return entry.value;
  }

  return {
    get,
    evict,
    async evictIfCurrent(key, value) {
      if (entries.get(key)?.resolved === value) await evict(key);
    },
    async evictPrefix(prefix) {
      await Promise.all([...entries.keys()].filter((key) => key.startsWith(prefix)).map(evict));
    },
    async evictIdle() {
      const cutoff = now() - options.idleMs;
      await Promise.all([...entries].filter(([, entry]) => entry.lastUsed <= cutoff).map(([key]) => evict(key)));
    },
    get size() {
      return entries.size;
    },
    async closeAll() {
      await Promise.all([...entries.keys()].map(evict));
    },
  };
}
