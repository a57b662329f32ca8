import { describe, expect, it } from 'vitest';
import { TokenCache } from '../../../src/auth/token-cache.js';
import { createAuthenticator } from '../../../src/auth/authenticator.js';
import { SignJWT } from 'jose';
import type { Principal } from '../../../src/call/principal.js';

const principal = (user: string): Principal => ({ tenant: 't', user, roles: [], claims: {} });

describe('TokenCache', () => {
  it('never keeps an entry past the token expiry, nor serves it at exp itself', () => {
    let now = 1_000_000;
    const cache = new TokenCache(10, 60_000, () => now);
    cache.set('k', principal('a'), now + 5_000);
    now += 4_999;
    expect(cache.get('k')?.user).toBe('a');
    now += 1;
    expect(cache.get('k')).toBeUndefined();
  });

  it('drops an entry after the configured ttl even when the token lives longer', () => {
    let now = 1_000_000;
    const cache = new TokenCache(10, 60_000, () => now);
    cache.set('k', principal('a'), now + 3_600_000);
    cache.set('key', principal('b'), undefined);
    now += 59_999;
    expect(cache.get('k')?.user).toBe('a');
    expect(cache.get('key')?.user).toBe('b');
    now += 1;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.get('key')).toBeUndefined();
  });

  it('does not keep a token that expires within the millisecond', () => {
    const now = 1_000_000;
    const cache = new TokenCache(10, 60_000, () => now);
    cache.set('k', principal('a'), now + 1);
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry beyond its bound (a hit makes an entry recent)', () => {
    let now = 1_000_000;
    const cache = new TokenCache(2, 60_000, () => now);
    cache.set('a', principal('a'), undefined);
    cache.set('b', principal('b'), undefined);
    now += 1;
    cache.get('a');
    cache.set('c', principal('c'), undefined);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.user).toBe('a');
    expect(cache.size).toBe(2);
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
