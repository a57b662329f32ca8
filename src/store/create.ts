import type { StoreConfig } from '../config/types.js';
import { createMemoryStore } from './memory.js';
import { createRedisStore } from './redis.js';
import type { StateStore } from './types.js';

/** The store named by `store.kind` in config. */
export function createStore(config: StoreConfig): StateStore {
  return config.kind === 'redis' ? createRedisStore({ url: config.url, prefix: config.prefix }) : createMemoryStore();
}
