import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/store/create.js';
import { testRedisUrl } from '../../helpers/redis.js';
import { freeLoopbackPort } from '../../helpers/redis-server.js';

const REDIS_URL = testRedisUrl();

describe('createStore', () => {
  it('picks the memory store for store.kind memory', async () => {
    const memory = createStore({ kind: 'memory' });
    expect(memory.kind).toBe('memory');
    await memory.close();
  });

  it.skipIf(!REDIS_URL)('picks the Redis store for store.kind redis', async () => {
    const redis = createStore({ kind: 'redis', url: REDIS_URL ?? '', prefix: 'tg-test-create:', onUnavailable: 'fail-closed', commandTimeoutMs: 1000 });
    expect(redis.kind).toBe('redis');
    await redis.close();
  });

  it("hands the store the process's hooks, never the config's rate-limit setting of the same name", async () => {
    const failed: string[] = [];
    const config = { kind: 'redis' as const, url: `redis://127.0.0.1:${await freeLoopbackPort()}`, prefix: 'tg-test-create:', onUnavailable: 'fail-open' as const, commandTimeoutMs: 100 };
    const bare = createStore(config);
    const hooked = createStore(config, { onUnavailable: (operation) => failed.push(operation) });
    try {
      await expect(bare.get('k')).rejects.toMatchObject({ code: 'TG_STORE_UNAVAILABLE' });
      await expect(hooked.get('k')).rejects.toMatchObject({ code: 'TG_STORE_UNAVAILABLE' });
      expect(failed).toEqual(['get']);
    } finally {
      await Promise.all([bare.close(), hooked.close()]);
    }
  });
});
