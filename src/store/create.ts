import type { StoreConfig } from '../config/types.js';
import { createMemoryStore } from './memory.js';
import { createRedisStore, type RedisStoreOptions } from './redis.js';
import type { StateStore } from './types.js';

/** What the process wants to hear from a store that can become unreachable. */
export type StoreHooks = Pick<RedisStoreOptions, 'onStateChange' | 'onUnavailable'>;

/** The store named by `store.kind` in config. */
export function createStore(config: StoreConfig, hooks: StoreHooks = {}): StateStore {
  return config.kind === 'redis'
    ? createRedisStore({ url: config.url, prefix: config.prefix, commandTimeoutMs: config.commandTimeoutMs, ...hooks })
    : createMemoryStore();
}
