import { Redis } from 'ioredis';
import type { StateStore, WindowHit } from './types.js';

export interface RedisStoreOptions {
  url: string;
  /** Prepended to every key, so several deployments (or test runs) can share one Redis. */
  prefix: string;
}

// Sliding window on a sorted set scored by Redis' own clock (TIME), so replicas with skewed clocks agree.
// Refused hits are not recorded: a caller hammering a closed window does not push its own reopening back.
const HIT_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local retry = tonumber(oldest[2]) + window - now
  if retry < 1 then retry = 1 end
  return {0, count, retry}
end
redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return {1, count + 1, 0}
`;

// Compare and replace in one step; without a TTL argument the key keeps its expiry (KEEPTTL, Redis ≥ 6).
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if current ~= ARGV[1] then return 0 end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
end
return 1
`;

type ScriptClient = Redis & {
  tgHitWindow(key: string, windowMs: number, limit: number, nonce: string): Promise<[number, number, number]>;
  tgCompareAndSet(key: string, expected: string, value: string, ttlMs: string): Promise<number>;
};

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/** The shared store for N replicas: every operation that must be atomic is one command or one Lua script. */
export function createRedisStore(options: RedisStoreOptions): StateStore {
  const client = new Redis(options.url, { lazyConnect: false, maxRetriesPerRequest: 2 }) as ScriptClient;
  client.defineCommand('tgHitWindow', { numberOfKeys: 1, lua: HIT_WINDOW });
  client.defineCommand('tgCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
  const k = (key: string): string => options.prefix + key;
  let nonce = 0;

  return {
    kind: 'redis',
    async get(key) {
      return client.get(k(key));
    },
    async set(key, value, opts) {
      if (opts?.ttlMs !== undefined) await client.set(k(key), value, 'PX', opts.ttlMs);
      else await client.set(k(key), value);
    },
    async setIfAbsent(key, value, opts) {
      const reply =
        opts?.ttlMs !== undefined ? await client.set(k(key), value, 'PX', opts.ttlMs, 'NX') : await client.set(k(key), value, 'NX');
      return reply === 'OK';
    },
    async compareAndSet(key, expected, value, opts) {
      return (await client.tgCompareAndSet(k(key), expected, value, opts?.ttlMs === undefined ? '' : String(opts.ttlMs))) === 1;
    },
    async delete(key) {
      return (await client.del(k(key))) > 0;
    },
    async scan(prefix) {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await client.scan(cursor, 'MATCH', `${escapeGlob(k(prefix))}*`, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
      const unique = [...new Set(keys)].sort();
      if (unique.length === 0) return [];
      // MGET answers null for expired keys and for non-string keys (sliding windows), so both drop out.
      const values = await client.mget(...unique);
      const found: Array<{ key: string; value: string }> = [];
      unique.forEach((key, i) => {
        const value = values[i];
        if (typeof value === 'string') found.push({ key: key.slice(options.prefix.length), value });
      });
      return found;
    },
    async hitWindow(key, limit, windowMs): Promise<WindowHit> {
      nonce = (nonce + 1) % Number.MAX_SAFE_INTEGER;
      const member = `${process.pid}-${nonce}-${Math.random().toString(36).slice(2)}`;
      const [allowed, count, retryAfterMs] = await client.tgHitWindow(k(key), windowMs, limit, member);
      return { allowed: allowed === 1, count, retryAfterMs };
    },
    async pushCapped(key, value, max) {
      // One MULTI: the list never holds more than `max` entries between the two commands.
      await client.multi().lpush(k(key), value).ltrim(k(key), 0, max - 1).exec();
    },
    async recent(key, limit) {
      return client.lrange(k(key), 0, limit - 1);
    },
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
