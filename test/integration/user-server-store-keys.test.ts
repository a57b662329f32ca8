// Every key a user can make the store hold is removed with its owner or expires
// (docs/security-model.md#store-keys-users-create): registering and removing a server with `auth` 100
// times leaves nothing behind — no emptied registration record, no empty connection index — on the memory
// store and on a real Redis (SCAN + PTTL); and another tenant is served within a second meanwhile.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory.js';
import { createRedisStore } from '../../src/store/redis.js';
import type { StateStore } from '../../src/store/types.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { boundedRedisClient, deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../helpers/victim-tenant.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-keys:${randomBytes(6).toString('hex')}:`;
const PAIRS = 100;

/** The store's keys that never expire: every key for the memory store (it tells no TTL), PTTL -1 for Redis. */
async function keysWithoutTtl(kind: string, store: StateStore): Promise<string[]> {
  if (kind === 'memory' || !REDIS_URL) return (await store.scan('')).map((entry) => entry.key).sort();
  const admin = boundedRedisClient(REDIS_URL);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of batch) if ((await admin.pttl(key)) === -1) keys.push(key.slice(prefix.length));
    } while (cursor !== '0');
    return keys.sort();
  } finally {
    admin.disconnect();
  }
}

const implementations: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) implementations.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);

afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

describe.each(implementations)('the %s store', (kind, make) => {
  it(`${PAIRS} PUT+DELETE pairs of a user's server with auth, repeated while another tenant is served, leave no key without a TTL`, async () => {
    const store = make();
    const app = await buildTestApp(
      testConfig({
        egress: { allow: ['127.0.0.1'] },
        credentials: { keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] },
        functions: VICTIM_FUNCTIONS,
        tenants: { acme: {}, [VICTIM_TENANT]: VICTIM_TENANT_CONFIG },
      }),
      { store },
    );
    try {
      const mallory = await signToken({ sub: 'mallory' });
      const victim = await victimOf(app);
      const before = await keysWithoutTtl(kind, store);
      const auth = { type: 'clientCredentials', tokenUrl: 'http://127.0.0.1:9/token', clientId: 'mallory-bot', clientSecret: 'mallory-secret' };
      // Batches of PAIRS with fresh server ids, repeated (at most 10 times) until the victim was sampled.
      await expectVictimServedDuring(app, victim, (rounds) =>
        repeatUntil(rounds, async (batch) => {
          for (let i = 0; i < PAIRS; i += 1) {
            const url = `/v1/users/mallory/mcp-servers/card${batch}-${i}`;
            expect((await app.inject({ method: 'PUT', url, headers: bearer(mallory), payload: { url: 'http://127.0.0.1:9/mcp', auth } })).statusCode).toBe(201);
            expect((await app.inject({ method: 'DELETE', url, headers: bearer(mallory) })).statusCode).toBe(204);
          }
        }, { maxRepeats: 50 }),
      );
      expect(await keysWithoutTtl(kind, store)).toEqual(before);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
