import { EventEmitter } from 'node:events';

/**
 * Fire-and-forget messages between replicas (pub/sub), beside the state store: in memory for one process,
 * Redis PUBLISH/SUBSCRIBE with `store: redis`. Delivery is best effort and reaches the publisher too, so
 * a subscriber's handling must be idempotent; anything that must not be lost belongs in the store.
 */
export interface MessageBus {
  publish(channel: string, message: string): Promise<void>;
  /** Calls `handler` for every message on `channel` from now on; returns the unsubscribe. */
  subscribe(channel: string, handler: (message: string) => void): () => void;
  close(): Promise<void>;
}

/** The one-process bus: messages stay inside this process. */
export function createMemoryBus(): MessageBus {
  const emitter = new EventEmitter();
  // One listener per subscriber (a few per app), never a leak warning for a test that builds many apps.
  emitter.setMaxListeners(0);
  return {
    async publish(channel, message) {
      emitter.emit(channel, message);
    },
    subscribe(channel, handler) {
      emitter.on(channel, handler);
      return () => void emitter.off(channel, handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}
