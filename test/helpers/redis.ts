import { Redis } from 'ioredis';
import { inject } from 'vitest';

/** The Redis the global setup found or started, or undefined when the Redis tests skip. */
export const testRedisUrl = (): string | undefined => inject('redisUrl') ?? undefined;

/** A client that gives up at once instead of reconnecting forever, so no test waits on a Redis that went away. */
export const boundedRedisClient = (url: string): Redis =>
  new Redis(url, { connectTimeout: 2_000, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: true });

/** Removes every key a test file wrote under `prefix`. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const admin = boundedRedisClient(url);
  try {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  } finally {
    admin.disconnect();
  }
}
