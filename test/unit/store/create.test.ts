import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/store/create.js';
import { testRedisUrl } from '../../helpers/redis.js';

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
});
