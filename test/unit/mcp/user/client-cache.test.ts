import { describe, expect, it } from 'vitest';
import { createClientCache } from '../../../../src/mcp/user/client-cache.js';

function cacheWithClock(maxEntries = 10) {
  // lru-cache reads a start time of 0 as "no ttl": the test clock starts later, as a real one does.
  const clock = { now: 1_000 };
  const closed: string[] = [];
  const cache = createClientCache<string>({
    maxEntries,
    idleMs: 100,
    now: () => clock.now,
    // Closing takes a turn of the event loop, as a real client's does: evict must still wait for it.
    close: (value) => new Promise<void>((resolve) => setImmediate(() => resolve(void closed.push(value)))),
  });
  return { cache, clock, closed };
}

describe('user MCP client cache', () => {
  it('closes the least recently used client before get returns, when one past the bound arrives', async () => {
    const { cache, closed } = cacheWithClock(2);
    await cache.get('a', 'f', async () => 'A');
    await cache.get('b', 'f', async () => 'B');
    await cache.get('a', 'f', async () => 'unused'); // a hit: `a` becomes the most recent
    await cache.get('c', 'f', async () => 'C');
    expect(closed).toEqual(['B']);
    expect(cache.size).toBe(2);
  });

  it('keeps a client used within the idle period (every hit renews it) and closes one idle past it', async () => {
    const { cache, clock, closed } = cacheWithClock();
    await cache.get('a', 'f', async () => 'A');
    await cache.get('b', 'f', async () => 'B');
    clock.now = 1_090;
    await cache.get('a', 'f', async () => 'unused');
    clock.now = 1_150;
    await cache.evictIdle();
    expect(closed).toEqual(['B']);
    expect(await cache.get('a', 'f', async () => 'unused')).toBe('A');
    clock.now = 1_251;
    expect(await cache.get('a', 'f', async () => 'A2')).toBe('A2'); // expired: reopened, the old one closed
    await cache.closeAll();
    expect(closed).toEqual(['B', 'A', 'A2']);
  });

  it('evicts by prefix (a user forgetting their servers), idle clients of that user included, and waits for the closes', async () => {
    const { cache, clock, closed } = cacheWithClock();
    await cache.get('t\u0000alice\u0000one', 'f', async () => 'A1');
    clock.now = 1_150;
    await cache.get('t\u0000alice\u0000two', 'f', async () => 'A2');
    await cache.get('t\u0000bob\u0000one', 'f', async () => 'B1');
    await cache.evictPrefix('t\u0000alice\u0000');
    expect(closed.sort()).toEqual(['A1', 'A2']);
    expect(cache.size).toBe(1);
  });

  it('ignores a late loss report of a client that was already replaced', async () => {
    const { cache, closed } = cacheWithClock();
    await cache.get('a', 'v1', async () => 'OLD');
    await cache.get('a', 'v2', async () => 'NEW');
    expect(closed).toEqual(['OLD']);
    await cache.evictIfCurrent('a', 'OLD');
    expect(cache.size).toBe(1);
    await cache.evictIfCurrent('a', 'NEW');
    expect(closed).toEqual(['OLD', 'NEW']);
    expect(cache.size).toBe(0);
  });

  it('does not keep a failed open, and closes every client on closeAll', async () => {
    const { cache, closed } = cacheWithClock();
    await cache.get('a', 'f', async () => 'A');
    await expect(cache.get('b', 'f', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(cache.size).toBe(1);
    await cache.closeAll();
    expect(closed).toEqual(['A']);
    expect(cache.size).toBe(0);
  });
});
