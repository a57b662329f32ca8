import type { Cluster } from 'ioredis';
import { ReplyError } from 'ioredis';
import clusterKeySlot from 'cluster-key-slot';
import { ConfigError } from '../config/interpolate.js';
import { bounded } from './bounded.js';
import { trackClusterHandshakes } from './cluster-handshakes.js';
import { createRedisClient, type RedisClient, type RedisTopology } from './redis-client.js';
import type { LeaseGrant, StateStore, WindowHit } from './types.js';
import { isTlsTrustError, storeUnavailable } from './unavailable.js';

export type RedisStoreOptions = RedisTopology & {
  /** Prepended to every key, so several deployments (or test runs) can share one Redis. */
  prefix: string;
  /** Longest wait for one command's answer before it fails as unavailable (default 1000 ms). */
  commandTimeoutMs?: number;
  /** Longest wait for a connection (default 2000 ms); reconnecting goes on in the background. */
  connectTimeoutMs?: number;
  /** Told when the store comes up or goes down (`error` is the reason it went down, when known). */
  onStateChange?: (up: boolean, error?: Error) => void;
  /** Told about every operation that failed because the store did not answer. */
  onUnavailable?: (operation: string) => void;
};

// Sliding window on a sorted set scored by Redis' own clock (TIME), so replicas with skewed clocks agree.
// Refused hits are not recorded: a caller hammering a closed window does not push its own reopening back.
// A weighted hit adds its members in a few ZADDs (1000 arguments each), never one command per hit.
const HIT_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local weight = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count + weight > limit then
  local retry = window
  if weight <= limit then
    local freeing = count + weight - limit - 1
    local hit = redis.call('ZRANGE', KEYS[1], freeing, freeing, 'WITHSCORES')
    retry = tonumber(hit[2]) + window - now
  end
  if retry < 1 then retry = 1 end
  return {0, count, retry}
end
local members = {}
for i = 1, weight do
  members[#members + 1] = now
  members[#members + 1] = now .. '-' .. ARGV[3] .. '-' .. i
  if #members >= 1000 or i == weight then
    redis.call('ZADD', KEYS[1], unpack(members))
    members = {}
  end
end
redis.call('PEXPIRE', KEYS[1], window)
return {1, count + weight, 0}
`;

// KEYS: the list. ARGV: value, max.
const PUSH_CAPPED = `
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return 1
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

// Lease groups are sorted sets of lease ids scored by expiry on Redis' clock; each group key expires with
// its longest lease. Every script touches only the keys it names and the groups' own members: its cost is
// bounded by the bounds, never by the keyspace (no SCAN, no KEYS).
// Scores are milliseconds with the microseconds kept, and a lease set or renewed within a millisecond of its
// group's newest scores just above it: equal scores would order by id (ZRANGE's tie-break), so two leases
// taken in one millisecond could evict the newer one. A longer-lived lease's score is never borrowed.
const LEASE_CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local function latest(group, score)
  local last = redis.call('ZRANGE', group, -1, -1, 'WITHSCORES')
  local newest = last[2] and tonumber(last[2])
  if newest and newest >= score and newest < score + 1 then return newest + 0.001 end
  return score
end
local function outlive(group)
  local last = redis.call('ZRANGE', group, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', group, math.ceil(tonumber(last[2]))) end
end
`;

// KEYS: record, own group, shared group. ARGV: id, value, ttlMs, own limit, shared limit, own record prefix,
// '0' when a full own group refuses instead of ending its oldest leases (a refusal answers {0, 'own' | 'shared'}),
// then side suffix and value pairs. Side records share the record's slot: their keys extend its hash-tagged key.
const ACQUIRE_LEASE = `${LEASE_CLOCK}
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local evict = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4]) + 1
if evict < 0 then evict = 0 end
if evict > 0 and ARGV[7] == '0' then return {0, 'own'} end
if redis.call('ZCARD', KEYS[3]) - evict >= tonumber(ARGV[5]) then return {0, 'shared'} end
local ended = {}
if evict > 0 then ended = redis.call('ZRANGE', KEYS[2], 0, evict - 1) end
for _, id in ipairs(ended) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('DEL', ARGV[6] .. id)
  for i = 8, #ARGV, 2 do redis.call('DEL', ARGV[6] .. id .. ARGV[i]) end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
for i = 8, #ARGV, 2 do redis.call('SET', KEYS[1] .. ARGV[i], ARGV[i + 1], 'PX', ttl) end
redis.call('ZADD', KEYS[2], latest(KEYS[2], now + ttl), ARGV[1])
redis.call('ZADD', KEYS[3], latest(KEYS[3], now + ttl), ARGV[1])
outlive(KEYS[2])
outlive(KEYS[3])
return {1, unpack(ended)}
`;

// KEYS: record, then every group. ARGV: id, expected value, ttlMs, then the side suffixes.
const RENEW_LEASE = `${LEASE_CLOCK}
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
local ttl = tonumber(ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
for i = 4, #ARGV do redis.call('PEXPIRE', KEYS[1] .. ARGV[i], ttl) end
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', latest(KEYS[i], now + ttl), ARGV[1])
  outlive(KEYS[i])
end
return 1
`;

// KEYS: the group. ARGV: how many of the soonest to answer. Reads only: expired members stay until a write drops them.
const READ_LEASES = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local count = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
local soonest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
return {count, soonest}
`;

// KEYS: record, then every group. ARGV: id, expected value, then the side suffixes.
const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
for i = 3, #ARGV do redis.call('DEL', KEYS[1] .. ARGV[i]) end
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
`;

// Budget counters (chargeCounters). KEYS: every counter's keys in order, then the tallies' keys. ARGV: the
// number of counters, then per counter its key count, amount, limit ('' for none) and expiry (epoch ms), then
// per tally its member, amount, expiry and how many members it keeps. Checks every limit before adding
// anything: a refused charge adds nothing. Amounts are integers (INCRBY), refunds negative.
const CHARGE_COUNTERS = `
local n = tonumber(ARGV[1])
local a = 2
local k = 1
local used = {}
local first = {}
local amounts = {}
local expiries = {}
local refused = 0
for i = 1, n do
  local count = tonumber(ARGV[a])
  local amount = tonumber(ARGV[a + 1])
  local sum = 0
  for j = 0, count - 1 do sum = sum + (tonumber(redis.call('GET', KEYS[k + j])) or 0) end
  if refused == 0 and ARGV[a + 2] ~= '' and amount > 0 and sum + amount > tonumber(ARGV[a + 2]) then refused = i end
  used[i] = sum
  first[i] = k
  amounts[i] = amount
  expiries[i] = ARGV[a + 3]
  k = k + count
  a = a + 4
end
if refused > 0 then return {0, refused - 1, unpack(used)} end
for i = 1, n do
  if amounts[i] ~= 0 then
    used[i] = redis.call('INCRBY', KEYS[first[i]], amounts[i])
    redis.call('PEXPIREAT', KEYS[first[i]], expiries[i])
  end
end
while a <= #ARGV do
  redis.call('ZINCRBY', KEYS[k], ARGV[a + 1], ARGV[a])
  redis.call('PEXPIREAT', KEYS[k], ARGV[a + 2])
  local over = redis.call('ZCARD', KEYS[k]) - tonumber(ARGV[a + 3])
  if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[k], 0, over - 1) end
  k = k + 1
  a = a + 4
end
return {1, -1, unpack(used)}
`;

type ScriptClient = RedisClient & {
  tgChargeCounters(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Promise<number[]>;
  tgAcquireLease(record: string, own: string, shared: string, id: string, value: string, ttlMs: number, ownLimit: number, sharedLimit: number, recordPrefix: string, evict: string, ...sides: string[]): Promise<[number, ...string[]]>;
  tgReadLeases(group: string, limit: number): Promise<[number, string[]]>;
  tgRenewLease(numberOfKeys: number, ...keysThenArgs: string[]): Promise<number>;
  tgReleaseLease(numberOfKeys: number, ...keysThenArgs: string[]): Promise<number>;
  tgHitWindow(key: string, windowMs: number, limit: number, nonce: string, weight: number): Promise<[number, number, number]>;
  tgCompareAndSet(key: string, expected: string, value: string, ttlMs: string): Promise<number>;
  tgPushCapped(key: string, value: string, max: number): Promise<number>;
};

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/** How long after a new Cluster client's first ready an operation it refused for want of a node is tried again. */
const CLUSTER_SETTLE_MS = 2000;

/** Reply errors that mean "not now" (a failover, a node still loading), not a bug: they count as unavailable. */
const OUTAGE_REPLY = /^(CLUSTERDOWN|TRYAGAIN|MOVED|ASK|READONLY|LOADING|MASTERDOWN|NOREPLICAS) /;

/**
 * The shared store for N replicas: every operation that must be atomic is one command or one Lua script,
 * whose keys share one hash slot (docs/architecture.md#state-store), so it runs the same on one server,
 * behind Sentinels and on a Cluster. Nothing waits on a store that is down: without a connection a
 * command fails at once (no offline queue, which would also run a write the caller was already told had
 * failed), one that gets no answer fails after `commandTimeoutMs`, and no operation outlives twice that.
 * Either way the operation throws TG_STORE_UNAVAILABLE; Redis' own reply errors (a bug, not an outage)
 * pass through unchanged. The client reconnects (and finds a promoted master) by itself.
 */
export function createRedisStore(options: RedisStoreOptions): StateStore {
  const commandTimeoutMs = options.commandTimeoutMs ?? 1000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000;
  const client = createRedisClient(options, 'commands', { commandTimeoutMs, connectTimeoutMs }) as ScriptClient;
  client.defineCommand('tgHitWindow', { numberOfKeys: 1, lua: HIT_WINDOW });
  client.defineCommand('tgCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
  client.defineCommand('tgPushCapped', { numberOfKeys: 1, lua: PUSH_CAPPED });
  client.defineCommand('tgAcquireLease', { numberOfKeys: 3, lua: ACQUIRE_LEASE });
  client.defineCommand('tgReadLeases', { numberOfKeys: 1, lua: READ_LEASES });
  // Without numberOfKeys the first argument says how many keys follow (a lease counts in any number of groups).
  client.defineCommand('tgRenewLease', { lua: RENEW_LEASE });
  client.defineCommand('tgReleaseLease', { lua: RELEASE_LEASE });
  client.defineCommand('tgChargeCounters', { lua: CHARGE_COUNTERS });
  const cluster = 'cluster' in options ? (client as Cluster) : undefined;
  const handshakes = cluster && trackClusterHandshakes(cluster);
  const k = (key: string): string => options.prefix + key;
  let nonce = 0;
  let closed = false;

  // Up once the connection is ready; down when it is lost. Only changes are reported (one log line per
  // outage, not one per failed reconnect).
  let up = false;
  let lastError: Error | undefined;
  const report = (next: boolean): void => {
    if (next === up || closed) return;
    up = next;
    options.onStateChange?.(up, up ? undefined : lastError);
  };
  client.on('ready', () => report(true));
  // Without an 'error' listener ioredis prints every failed reconnect to the console.
  client.on('error', (error: Error) => {
    lastError = error;
  });
  client.on('close', () => report(false));

  // A Cluster stays "ready" while one master is down (the others serve their slots): a failed operation
  // marks it down, and it is up again once every master answers a PING (probed every 500 ms meanwhile).
  let probe: NodeJS.Timeout | undefined;
  const probeCluster = (): void => {
    if (!cluster || probe || closed) return;
    probe = setInterval(() => {
      const masters = cluster.nodes('master');
      Promise.all(masters.map((node) => node.ping()))
        .then(() => {
          if (masters.length === 0) return;
          clearInterval(probe);
          probe = undefined;
          report(true);
        })
        .catch(() => undefined);
    }, 500);
  };

  // Until the first connection is ready (start-up), an operation waits for it, at most commandTimeout;
  // after that a lost connection fails operations at once.
  let firstReadyAt = 0;
  let firstReady: Promise<void> | undefined = new Promise<void>((resolve) => client.once('ready', resolve)).then(() => {
    firstReady = undefined;
    firstReadyAt = Date.now();
  });

  // Start-up check: settles on the first connection or the first failed attempt (Redis down is an outage
  // the gateway rides out), and rejects only when the server's certificate is not trusted, a configuration
  // error no reconnect repairs.
  const firstAttempt = bounded(
    new Promise<void>((resolve, reject) => {
      client.once('ready', resolve);
      const onError = (error: Error): void => {
        client.off('error', onError);
        if (isTlsTrustError(error)) reject(new ConfigError(`config /store: the Redis server's TLS certificate is not trusted (${error.message}); check store.tls.ca and store.tls.servername`));
        else resolve();
      };
      client.on('error', onError);
    }),
    connectTimeoutMs + 500,
    () => undefined,
  );
  firstAttempt.catch(() => undefined);

  /** ioredis's own refusal of a command it sent nowhere, within a new Cluster client's first seconds of being ready. */
  const settling = (error: unknown): boolean =>
    error instanceof Error && error.message.startsWith("Cluster isn't ready") && firstReadyAt > 0 && Date.now() - firstReadyAt < CLUSTER_SETTLE_MS;

  /**
   * Runs one operation; an outage becomes TG_STORE_UNAVAILABLE, a Redis reply error stays what it is.
   * `key` (unprefixed) names the node a Cluster runs it on (keys one script touches share a slot);
   * without one it touches every master.
   */
  const guarded = async <T>(operation: string, key: string | undefined, run: () => Promise<T>): Promise<T> => {
    try {
      const attempt = async (): Promise<T> => {
        if (firstReady) await bounded(firstReady, commandTimeoutMs, () => undefined);
        const handshake = handshakes && (key === undefined ? handshakes.forAll(commandTimeoutMs) : handshakes.forKey(k(key), commandTimeoutMs));
        if (handshake) await handshake;
        const deadline = Date.now() + commandTimeoutMs;
        for (;;) {
          try {
            return await run();
          } catch (error) {
            if (!cluster || !settling(error) || Date.now() >= deadline) throw error;
            // Just after a new Cluster client became ready, ioredis may still be swapping its node connections
            // (a command it retried found none for a moment, seen 1 new client in 100 in the topologies run).
            // ioredis refused it on this try for want of a node to send it to; it is sent again when the Cluster
            // is ready again, until commandTimeoutMs. Later, an outage still fails operations at once.
            if (cluster.status !== 'ready') await bounded(new Promise<void>((resolve) => cluster.once('ready', resolve)), commandTimeoutMs, () => undefined);
            else await new Promise<void>((resolve) => setTimeout(resolve, 50));
          }
        }
      };
      // The client's own timeouts bound each command; this bounds the whole operation (a scan's several
      // commands, a Cluster redirect) so no caller ever waits on the store longer than twice the timeout.
      return await bounded(attempt(), 2 * commandTimeoutMs, () => {
        throw new Error(`no answer within ${2 * commandTimeoutMs} ms`);
      });
    } catch (error) {
      if (error instanceof ReplyError && !OUTAGE_REPLY.test((error as Error).message)) throw error;
      if (error instanceof Error) lastError = error;
      if (cluster) {
        report(false);
        probeCluster();
      }
      options.onUnavailable?.(operation);
      throw storeUnavailable(operation, error);
    }
  };

  return {
    kind: 'redis',
    up: () => up,
    get(key) {
      return guarded('get', key, () => client.get(k(key)));
    },
    set(key, value, opts) {
      return guarded('set', key, async () => {
        if (opts?.ttlMs !== undefined) await client.set(k(key), value, 'PX', opts.ttlMs);
        else await client.set(k(key), value);
      });
    },
    setIfAbsent(key, value, opts) {
      return guarded('setIfAbsent', key, async () => {
        const reply =
          opts?.ttlMs !== undefined ? await client.set(k(key), value, 'PX', opts.ttlMs, 'NX') : await client.set(k(key), value, 'NX');
        return reply === 'OK';
      });
    },
    compareAndSet(key, expected, value, opts) {
      return guarded('compareAndSet', key, async () => (await client.tgCompareAndSet(k(key), expected, value, opts?.ttlMs === undefined ? '' : String(opts.ttlMs))) === 1);
    },
    delete(key) {
      return guarded('delete', key, async () => (await client.del(k(key))) > 0);
    },
    scan(prefix) {
      return guarded('scan', undefined, () => scanPrefix(prefix));
    },
    hitWindow(key, limit, windowMs, weight = 1): Promise<WindowHit> {
      nonce = (nonce + 1) % Number.MAX_SAFE_INTEGER;
      const member = `${process.pid}-${nonce}-${Math.random().toString(36).slice(2)}`;
      return guarded('hitWindow', key, async () => {
        const [allowed, count, retryAfterMs] = await client.tgHitWindow(k(key), windowMs, limit, member, weight);
        return { allowed: allowed === 1, count, retryAfterMs };
      });
    },
    pushCapped(key, value, max) {
      // One script: the list never holds more than `max` entries between the two commands (a script, not
      // MULTI, so a Cluster redirect or failover fails it cleanly instead of aborting a half-sent transaction).
      return guarded('pushCapped', key, async () => {
        await client.tgPushCapped(k(key), value, max);
      });
    },
    recent(key, limit, offset = 0) {
      return guarded('recent', key, () => client.lrange(k(key), offset, offset + limit - 1));
    },
    acquireLease({ id, record, ttlMs, own, shared, sides = {} }): Promise<LeaseGrant> {
      return guarded('acquireLease', record.key, async () => {
        const [granted, ...rest] = await client.tgAcquireLease(k(record.key), k(own.key), k(shared.key), id, record.value, ttlMs, own.limit, shared.limit, k(own.recordPrefix), own.evict === false ? '0' : '1', ...Object.entries(sides).flat());
        return granted === 1 ? { granted: true, evicted: rest } : { granted: false, full: rest[0] === 'own' ? 'own' : 'shared' };
      });
    },
    renewLease({ id, record, groups, ttlMs, sides = [] }) {
      return guarded('renewLease', record.key, async () => (await client.tgRenewLease(1 + groups.length, k(record.key), ...groups.map(k), id, record.value, String(ttlMs), ...sides)) === 1);
    },
    releaseLease({ id, record, groups, sides = [] }) {
      return guarded('releaseLease', record.key, async () => (await client.tgReleaseLease(1 + groups.length, k(record.key), ...groups.map(k), id, record.value, ...sides)) === 1);
    },
    readLeases(group, limit) {
      return guarded('readLeases', group, async () => {
        const [count, flat] = await client.tgReadLeases(k(group), limit);
        const soonest: Array<{ id: string; expiresAt: number }> = [];
        for (let i = 0; i + 1 < flat.length; i += 2) soonest.push({ id: flat[i]!, expiresAt: Math.floor(Number(flat[i + 1])) });
        return { count, soonest };
      });
    },
    indexAdd(key, member) {
      return guarded('indexAdd', key, async () => {
        await client.zadd(k(key), 0, member);
      });
    },
    indexRemove(key, member) {
      return guarded('indexRemove', key, async () => {
        await client.zrem(k(key), member);
      });
    },
    indexRange(key, { after, prefix = '', limit }) {
      // Members sharing a prefix are one contiguous lex range: start at the prefix (or just after `after`),
      // stop at the first member without it.
      const from = after !== undefined && after >= prefix ? `(${after}` : `[${prefix}`;
      return guarded('indexRange', key, async () => {
        const page = await client.zrangebylex(k(key), from, '+', 'LIMIT', 0, limit);
        const end = page.findIndex((member) => !member.startsWith(prefix));
        return end === -1 ? page : page.slice(0, end);
      });
    },
    chargeCounters({ counters, tallies = [] }) {
      const keys: string[] = [];
      const args: Array<string | number> = [counters.length];
      for (const counter of counters) {
        keys.push(...counter.keys.map(k));
        args.push(counter.keys.length, counter.amount, counter.limit ?? '', counter.expiresAt);
      }
      for (const tally of tallies) {
        keys.push(k(tally.key));
        args.push(tally.member, tally.amount, tally.expiresAt, tally.keep);
      }
      const slotKey = counters[0]?.keys[0] ?? tallies[0]?.key;
      return guarded('chargeCounters', slotKey, async () => {
        const [charged, refused, ...used] = await client.tgChargeCounters(keys.length, ...keys, ...args);
        return charged === 1 ? { charged: true, used } : { charged: false, refused: refused!, used };
      });
    },
    readTally(key, limit) {
      return guarded('readTally', key, async () => {
        const flat = await client.zrevrange(k(key), 0, limit - 1, 'WITHSCORES');
        const ranked: Array<{ member: string; amount: number }> = [];
        for (let i = 0; i + 1 < flat.length; i += 2) ranked.push({ member: flat[i]!, amount: Number(flat[i + 1]) });
        return ranked;
      });
    },
    verifyConnection: () => firstAttempt,
    async close() {
      closed = true;
      clearInterval(probe);
      await client.quit().catch(() => client.disconnect());
    },
  };

  async function scanPrefix(prefix: string): Promise<Array<{ key: string; value: string }>> {
    const pattern = `${escapeGlob(k(prefix))}*`;
    // A Cluster's keys live on its masters: each is scanned (a scan sees one node's keys only).
    const nodes: RedisClient[] = cluster ? cluster.nodes('master') : [client];
    const keys: string[] = [];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
    }
    const unique = [...new Set(keys)].sort();
    if (unique.length === 0) return [];
    // One MGET per hash slot (a Cluster refuses one across slots; on one server it is a single MGET).
    // MGET answers null for expired keys and for non-string keys (sliding windows), so both drop out.
    const bySlot = new Map<number, string[]>();
    for (const key of unique) {
      const slot = cluster ? clusterKeySlot(key) : 0;
      const group = bySlot.get(slot);
      if (group) group.push(key);
      else bySlot.set(slot, [key]);
    }
    const values = new Map<string, string | null>();
    await Promise.all(
      [...bySlot.values()].map(async (group) => {
        const answers = await client.mget(...group);
        group.forEach((key, i) => values.set(key, answers[i] ?? null));
      }),
    );
    const found: Array<{ key: string; value: string }> = [];
    for (const key of unique) {
      const value = values.get(key);
      if (typeof value === 'string') found.push({ key: key.slice(options.prefix.length), value });
    }
    return found;
  }
}
