import type { Cluster } from 'ioredis';
import type { MessageBus } from './bus.js';
import { trackClusterHandshakes } from './cluster-handshakes.js';
import { createRedisClient, type RedisTopology } from './redis-client.js';
import { storeUnavailable } from './unavailable.js';

export type RedisBusOptions = RedisTopology & {
  /** Prepended to every channel, like the store's key prefix. */
  prefix: string;
  commandTimeoutMs?: number;
};

/**
 * Redis pub/sub: a connection in subscriber mode (Redis allows no other command on it) and one to publish.
 * On a Cluster it is sharded pub/sub (SPUBLISH/SSUBSCRIBE): a channel lives on the shard that owns its
 * slot, instead of every message crossing every node. The subscriber resubscribes by itself after a
 * reconnect, a Sentinel failover or a Cluster topology change (ioredis); messages published while it was
 * away are lost, as the bus allows. A publish without a connection fails at once (one bound for a Cluster
 * node whose connection is still being set up waits for it: cluster-handshakes.ts).
 */
export function createRedisBus(options: RedisBusOptions): MessageBus {
  const timeouts = { commandTimeoutMs: options.commandTimeoutMs ?? 1000, connectTimeoutMs: 2000 };
  const publisher = createRedisClient(options, 'commands', timeouts);
  const subscriber = createRedisClient(options, 'subscriber', timeouts);
  const sharded = 'cluster' in options;
  const handshakes = sharded ? trackClusterHandshakes(publisher as Cluster) : undefined;
  // Without 'error' listeners ioredis prints every failed reconnect; the store's own client reports outages.
  publisher.on('error', () => undefined);
  subscriber.on('error', () => undefined);
  const handlers = new Map<string, Set<(message: string) => void>>();
  subscriber.on(sharded ? 'smessage' : 'message', (channel: string, message: string) => {
    for (const handler of handlers.get(channel.slice(options.prefix.length)) ?? []) handler(message);
  });

  return {
    async publish(channel, message) {
      const name = options.prefix + channel;
      try {
        const handshake = handshakes?.forKey(name, timeouts.commandTimeoutMs);
        if (handshake) await handshake;
        if (sharded) await publisher.spublish(name, message);
        else await publisher.publish(name, message);
      } catch (error) {
        throw storeUnavailable('publish', error);
      }
    },
    subscribe(channel, handler) {
      let set = handlers.get(channel);
      if (!set) {
        handlers.set(channel, (set = new Set()));
        const name = options.prefix + channel;
        (sharded ? subscriber.ssubscribe(name) : subscriber.subscribe(name)).catch(() => undefined);
      }
      set.add(handler);
      return () => {
        set.delete(handler);
        if (set.size > 0 || handlers.get(channel) !== set) return;
        handlers.delete(channel);
        const name = options.prefix + channel;
        (sharded ? subscriber.sunsubscribe(name) : subscriber.unsubscribe(name)).catch(() => undefined);
      };
    },
    async close() {
      handlers.clear();
      // QUIT only on a live connection: one still connecting would queue it until a connection that may
      // never come (a server whose certificate is not trusted), and closing must not wait for that.
      const end = async (client: typeof publisher): Promise<void> => {
        if (client.status === 'ready') await client.quit().catch(() => undefined);
        client.disconnect();
      };
      await Promise.all([end(publisher), end(subscriber)]);
    },
  };
}
