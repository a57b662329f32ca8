import type { TestProject } from 'vitest/node';
import { provideTestRedis } from './helpers/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis the Redis tests use, or null when there is none (they skip). */
    redisUrl: string | null;
  }
}

/** Runs once per `vitest run`: finds or starts the Redis the Redis tests share, and says so in one line. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const outcome = await provideTestRedis({ explicitUrl: process.env.TOOLGATE_TEST_REDIS_URL || undefined });
  if (!outcome.ok) {
    console.warn(`[toolgate tests] Redis tests SKIPPED: ${outcome.reason}`);
    project.provide('redisUrl', null);
    return async () => undefined;
  }
  console.log(`[toolgate tests] Redis tests use ${outcome.redis.origin}`);
  project.provide('redisUrl', outcome.redis.url);
  return () => outcome.redis.stop();
}
