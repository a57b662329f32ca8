import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/store/create.js';

describe('createStore', () => {
  it('picks the implementation named by store.kind', async () => {
    const memory = createStore({ kind: 'memory' });
    const redis = createStore({ kind: 'redis', url: 'redis://127.0.0.1:6379', prefix: 'tg-test-create:' });
    expect([memory.kind, redis.kind]).toEqual(['memory', 'redis']);
    await Promise.all([memory.close(), redis.close()]);
  });
});
