import { Redis } from 'ioredis';
import type { MessageBus } from './bus.js';
import { storeUnavailable } from './unavailable.js';

export interface RedisBusOptions {
  url: string;
  /** Prepended to every channel, like the store's key prefix. */
  prefix: string;
  commandTimeoutMs?: number;
}

const reconnectDelay = (attempt: number): number => Math.min(50 * 2 ** Math.min(attempt, 5), 1000);

/**
 * Redis pub/sub: a connection in subscriber mode (Redis allows no other command on it) and one to publish.
 * The subscriber resubscribes by itself after a reconnect (ioredis' autoResubscribe); messages published
 * while it was away are lost, as the bus allows. A publish without a connection fails at once.
 */
export function createRedisBus(options: RedisBusOptions): MessageBus {
  const common = { connectTimeout: 2000, retryStrategy: reconnectDelay, lazyConnect: false };
  const publisher = new Redis(options.url, { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: options.commandTimeoutMs ?? 1000 });
  const subscriber = new Redis(options.url, { ...common, autoResubscribe: true });
  // Without 'error' listeners ioredis prints every failed reconnect; the store's own client reports outages.
  publisher.on('error', () => undefined);
  subscriber.on('error', () => undefined);
  const handlers = new Map<string, Set<(message: string) => void>>();
  subscriber.on('message', (channel: string, message: string) => {
    for (const handler of handlers.get(channel.slice(options.prefix.length)) ?? []) handler(message);
  });

  return {
    async publish(channel, message) {
      try {
        await publisher.publish(options.prefix + channel, message);
      } catch (error) {
        throw storeUnavailable('publish', error);
      }
    },
    subscribe(channel, handler) {
      let set = handlers.get(channel);
      if (!set) {
        handlers.set(channel, (set = new Set()));
        subscriber.subscribe(options.prefix + channel).catch(() => undefined);
      }
      set.add(handler);
      return () => {
        set.delete(handler);
        if (set.size > 0 || handlers.get(channel) !== set) return;
        handlers.delete(channel);
        subscriber.unsubscribe(options.prefix + channel).catch(() => undefined);
      };
    },
    async close() {
      handlers.clear();
      await Promise.allSettled([publisher.quit(), subscriber.quit()]);
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
