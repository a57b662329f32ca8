// Replicas of toolgate on one Redis, each with the real server-everything (streamable HTTP) as the global service
// `everything` of tenant acme: for the tests of answers that land on another replica than the call that waits.
import type { FastifyInstance } from 'fastify';
import { startEverythingHttp, type SpawnedServer } from '../fixtures/mcp/spawn-everything.js';
import { buildTestApp, testConfig } from './build.js';
import { deleteRedisKeys } from './redis.js';

export interface EverythingReplicas {
  apps: FastifyInstance[];
  urls: string[];
  close(): Promise<void>;
}

/** `count` listening replicas sharing `redisUrl` under `prefix`; `extra` is merged into their config. */
export async function startEverythingReplicas(redisUrl: string, prefix: string, count: number, extra: Record<string, unknown> = {}): Promise<EverythingReplicas> {
  const everything: SpawnedServer = await startEverythingHttp();
  const config = testConfig({
    store: { kind: 'redis', url: redisUrl, prefix },
    mcp: { global: [{ id: 'everything', transport: 'streamable-http', url: everything.url, required: true }] },
    tenants: { acme: { mcpServices: ['everything'] } },
    ...extra,
  });
  const apps: FastifyInstance[] = [];
  const urls: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const app = await buildTestApp(config);
    apps.push(app);
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
  }
  return {
    apps,
    urls,
    async close() {
      await Promise.all(apps.map((app) => app.close()));
      await everything.kill();
      await deleteRedisKeys(redisUrl, prefix);
    },
  };
}
