import { describe, expect, it } from 'vitest';
import { TokenCache } from '../../../src/auth/token-cache.js';
import { createAuthenticator } from '../../../src/auth/authenticator.js';
import { SignJWT } from 'jose';
import type { Principal } from '../../../src/types.js';

const principal = (user: string): Principal => ({ tenant: 't', user, roles: [], claims: {} });

describe('TokenCache', () => {
  it('never keeps an entry past the token expiry', () => {
    let now = 1_000_000;
    const cache = new TokenCache(10, 60_000, () => now);
    cache.set('k', principal('a'), now + 5_000);
    expect(cache.get('k')?.user).toBe('a');
    now += 5_001;
    expect(cache.get('k')).toBeUndefined();
  });

  // Two entries in a cache of two; `a` is hit `elapsedMs` after both were set, then a third entry arrives.
  function hitThenOverflow(elapsedMs: number): TokenCache {
    let now = 1_000_000;
    const cache = new TokenCache(2, 60_000, () => now);
    cache.set('a', principal('a'), undefined);
    cache.set('b', principal('b'), undefined);
    now += elapsedMs;
    cache.get('a');
    cache.set('c', principal('c'), undefined);
    return cache;
  }

  it('evicts the least recently used entry beyond its bound', () => {
    const cache = hitThenOverflow(1_000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.user).toBe('a');
    expect(cache.size).toBe(2);
  });

  it('reorders a hit at most once a second (a hit within the second keeps its place)', () => {
    const cache = hitThenOverflow(999);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.user).toBe('b');
  });

  it('is a no-op with max 0', () => {
    const cache = new TokenCache(0, 60_000);
    cache.set('a', principal('a'), undefined);
    expect(cache.size).toBe(0);
  });
});

describe('authenticator cache', () => {
  it('serves a verified JWT from cache until its exp, then refuses it', async () => {
    let now = Date.now();
    const secret = 's'.repeat(40);
    const auth = await createAuthenticator(
      { jwt: { secret, tenantClaim: 'tenant', rolesClaim: 'roles', clockToleranceSec: 0, requireExp: true, maxTokenLifetimeSec: 3600 }, apiKeys: [], operators: [], authorizationServers: [], scopesSupported: [], cache: { max: 10, ttlMs: 600_000 } },
      { now: () => now },
    );
    const exp = Math.floor(now / 1000) + 10;
    const token = await new SignJWT({ tenant: 't', roles: 'viewer editor' }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setExpirationTime(exp).sign(new TextEncoder().encode(secret));
    const first = await auth.authenticate(token);
    expect(first).toMatchObject({ tenant: 't', user: 'u', roles: ['viewer', 'editor'] });
    expect(auth.cache.size).toBe(1);
    now = exp * 1000 + 1;
    await expect(auth.authenticate(token)).rejects.toThrow('token expired');
  });
});
