import type { StoreConfig } from '../config/types.js';
import { createMemoryBus, type MessageBus } from './bus.js';
import { createMemoryStore } from './memory.js';
import { createRedisBus } from './redis-bus.js';
import { createRedisStore, type RedisStoreOptions } from './redis.js';
import type { StateStore } from './types.js';

/** What the process wants to hear from a store that can become unreachable. */
export type StoreHooks = Pick<RedisStoreOptions, 'onStateChange' | 'onUnavailable'>;

/** The store named by `store.kind` in config (with Redis: one server, a Cluster or a Sentinel-watched master). */
export function createStore(config: StoreConfig, hooks: StoreHooks = {}): StateStore {
  if (config.kind !== 'redis') return createMemoryStore();
  const { onUnavailable: _rateLimitsWhileDown, kind: _kind, ...connection } = config;
  return createRedisStore({ ...connection, ...hooks });
}

/** The message bus beside that store: Redis pub/sub with `kind: redis`, in-process otherwise. */
export function createBus(config: StoreConfig): MessageBus {
  return config.kind === 'redis' ? createRedisBus(config) : createMemoryBus();
}
