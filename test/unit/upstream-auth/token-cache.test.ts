import { describe, expect, it } from 'vitest';
import { AccessTokenCache, EARLY_RENEWAL_MS } from '../../../src/upstream-auth/token-cache.js';

describe('the access-token cache', () => {
  it('fetches once however many callers wait (single flight), then serves until shortly before exp', async () => {
    let now = 1_000_000;
    const cache = new AccessTokenCache(10, () => now);
    let fetches = 0;
    let release: (() => void) | undefined;
    const fetchToken = () => {
      fetches += 1;
      return new Promise<{ accessToken: string; expiresAt: number; scopes: string[] }>((resolve) => {
        release = () => resolve({ accessToken: `t${fetches}`, expiresAt: now + 60_000, scopes: [] });
      });
    };
    const waiting = Array.from({ length: 20 }, () => cache.get('k', fetchToken));
    release?.();
    const tokens = await Promise.all(waiting);
    expect(fetches).toBe(1);
    expect(new Set(tokens.map(({ token }) => token.accessToken))).toEqual(new Set(['t1']));
    now += 60_000 - EARLY_RENEWAL_MS - 1;
    expect((await cache.get('k', fetchToken)).cached).toBe(true);
    now += 2;
    const renewed = cache.get('k', fetchToken);
    release?.();
    expect((await renewed).token.accessToken).toBe('t2');
  });

  it('never keeps a token past its cap (the subject token\'s exp), and drops the least recently used past max', async () => {
    let now = 1_000_000;
    const cache = new AccessTokenCache(1, () => now);
    let fetches = 0;
    const fetchToken = async () => ({ accessToken: `t${++fetches}`, expiresAt: now + 3_600_000, scopes: [] });
    await cache.get('a', fetchToken, now);
    expect((await cache.get('a', fetchToken, now)).cached).toBe(false);
    const capAt = now + 10_000;
    await cache.get('b', fetchToken, capAt);
    now = capAt - 1;
    expect((await cache.get('b', fetchToken, capAt)).cached).toBe(true);
    now = capAt;
    expect((await cache.get('b', fetchToken, capAt)).cached).toBe(false);
    await cache.get('c', fetchToken);
    expect((await cache.get('b', fetchToken)).cached).toBe(false);
  });

  it('does not keep a failed fetch: the next caller fetches again', async () => {
    const cache = new AccessTokenCache(10, () => 1_000_000);
    await expect(cache.get('k', async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    const { token, cached } = await cache.get('k', async () => ({ accessToken: 'ok', expiresAt: 1_000_000 + 3_600_000, scopes: [] }));
    expect([token.accessToken, cached]).toEqual(['ok', false]);
  });

  it('answers every caller when more keys are fetched at once than it keeps', async () => {
    const cache = new AccessTokenCache(1, () => 1_000_000);
    const releases: Array<() => void> = [];
    const slow = (accessToken: string) => () =>
      new Promise<{ accessToken: string; expiresAt: number; scopes: string[] }>((resolve) => releases.push(() => resolve({ accessToken, expiresAt: 1_000_000 + 3_600_000, scopes: [] })));
    const both = Promise.all([cache.get('a', slow('A')), cache.get('b', slow('B'))]);
    for (const release of releases) release();
    expect((await both).map(({ token }) => token.accessToken)).toEqual(['A', 'B']);
  });
});
