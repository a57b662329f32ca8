// Start-up against Redis: a store that is merely down lets the gateway start (it rides the outage out),
// a certificate the client does not trust is a configuration error (docs/configuration.md#store).
import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../../src/store/redis.js';
import { isTlsTrustError } from '../../../src/store/unavailable.js';
import { freeLoopbackPort } from '../../helpers/redis-server.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

describe('Redis start-up', () => {
  it('settles the start-up check without an error when nothing listens, within the connect bound', async () => {
    const store = createRedisStore({ url: `redis://127.0.0.1:${await freeLoopbackPort()}`, prefix: 'tg-start-up:', connectTimeoutMs: 500 });
    try {
      const started = Date.now();
      await expect(store.verifyConnection?.()).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(store.up?.()).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('tells an untrusted certificate from an outage, also when a Cluster wraps it', () => {
    expect(isTlsTrustError(withCode('SELF_SIGNED_CERT_IN_CHAIN'))).toBe(true);
    expect(isTlsTrustError(withCode('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe(true);
    expect(isTlsTrustError(Object.assign(new Error('Failed to refresh slots cache.'), { lastNodeError: withCode('UNABLE_TO_VERIFY_LEAF_SIGNATURE') }))).toBe(true);
    expect(isTlsTrustError(withCode('ECONNREFUSED'))).toBe(false);
    expect(isTlsTrustError(new Error('Connection is closed.'))).toBe(false);
    expect(isTlsTrustError('SELF_SIGNED_CERT_IN_CHAIN')).toBe(false);
  });
});
