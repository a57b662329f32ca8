import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { ConfigError } from '../config/interpolate.js';
import type { RedisStoreConfig, RedisTlsConfig } from '../config/types.js';

/** Where Redis is: `url`, `cluster` or `sentinel` from the `store` config, with its `tls`. */
type Topology<T> = T extends unknown ? Pick<T, Extract<keyof T, 'url' | 'cluster' | 'sentinel' | 'tls'>> : never;
export type RedisTopology = Topology<RedisStoreConfig>;

/** A single server, a master found through Sentinels, or a Cluster: they share the command API. */
export type RedisClient = Redis | Cluster;

/** What the connection is for: commands (nothing queued, bounded waits) or a subscriber (waits for messages). */
export type RedisRole = 'commands' | 'subscriber';

export interface RedisClientOptions {
  /** Longest wait for one command's answer (commands only). */
  commandTimeoutMs: number;
  /** Longest wait for a connection. */
  connectTimeoutMs: number;
}

/** Reconnect delay: fast at first, then at most every second, so a store that comes back is used within ~1 s. */
export const reconnectDelay = (attempt: number): number => Math.min(50 * 2 ** Math.min(attempt, 5), 1000);

/** The PEM files named by `store.tls`, read once at start-up (a missing file stops start-up, naming the key). */
export function tlsOptions(tls: RedisTlsConfig | undefined): ConnectionOptions {
  const read = (key: 'ca' | 'cert' | 'key'): string | undefined => {
    const file = tls?.[key];
    if (file === undefined) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`config /store/tls/${key}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const options: ConnectionOptions = {};
  const ca = read('ca');
  const cert = read('cert');
  const key = read('key');
  if (ca !== undefined) options.ca = ca;
  if (cert !== undefined) options.cert = cert;
  if (key !== undefined) options.key = key;
  if (tls?.servername !== undefined) options.servername = tls.servername;
  return options;
}

/** How one connection behaves; the same for every topology, so failover costs the same everywhere. */
function connectionOptions(role: RedisRole, options: RedisClientOptions): RedisOptions {
  const common: RedisOptions = { connectTimeout: options.connectTimeoutMs, lazyConnect: false };
  if (role === 'subscriber') return { ...common, autoResubscribe: true };
  // No offline queue: a command without a connection fails at once, and one that may have reached a
  // server is never sent again (a retried script would count a rate-limit hit twice).
  return { ...common, commandTimeout: options.commandTimeoutMs, maxRetriesPerRequest: 0 };
}

function clusterNode(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || 6379) };
}

/** The credentials a cluster node URL carries (the first node's that has any: every node shares them). */
function clusterAuth(urls: string[]): Pick<RedisOptions, 'username' | 'password'> {
  for (const url of urls) {
    const { username, password } = new URL(url);
    if (username || password) return { username: decodeURIComponent(username) || undefined, password: decodeURIComponent(password) };
  }
  return {};
}

/**
 * The ioredis client for `store` (docs/configuration.md#store): `url` (one server), `cluster` (Cluster,
 * with sharded pub/sub for a subscriber) or `sentinel` (the master the Sentinels name, re-asked after a
 * failover). TLS is on with `rediss://` or `store.tls`.
 */
export function createRedisClient(config: RedisTopology, role: RedisRole, options: RedisClientOptions): RedisClient {
  const connection = connectionOptions(role, options);
  const tlsWanted = (urls: string[]): boolean => config.tls !== undefined || urls.some((url) => url.startsWith('rediss://'));
  const queue = { enableOfflineQueue: role === 'subscriber' };

  if ('cluster' in config) {
    const urls = config.cluster.nodes;
    const clusterOptions: ClusterOptions = {
      ...queue,
      clusterRetryStrategy: reconnectDelay,
      // A command on a connection that closed may have run: it is not re-sent (retries only on MOVED,
      // ASK and TRYAGAIN, whose answer says the command did not run).
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 0,
      // A promoted replica is found within about a second even if no MOVED answer tells of it.
      slotsRefreshInterval: 1000,
      slotsRefreshTimeout: options.connectTimeoutMs,
      shardedSubscribers: role === 'subscriber',
      // Seed host names reach the socket unresolved (ioredis would swap them for addresses first), so a
      // TLS certificate is checked against the name in `cluster.nodes`, which managed Clusters' carry.
      dnsLookup: (address, callback) => callback(null, address),
      redisOptions: { ...connection, ...clusterAuth(urls), ...(tlsWanted(urls) ? { tls: tlsOptions(config.tls) } : {}) },
    };
    return new Cluster(urls.map(clusterNode), clusterOptions);
  }

  if ('sentinel' in config) {
    const { name, sentinels, username, password, sentinelPassword } = config.sentinel;
    const tls = config.tls === undefined ? {} : { tls: tlsOptions(config.tls), enableTLSForSentinelMode: true };
    return new Redis({
      ...connection,
      ...queue,
      ...tls,
      name,
      sentinels: sentinels.map((address) => {
        const at = address.lastIndexOf(':');
        return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
      }),
      username,
      password,
      sentinelPassword,
      sentinelCommandTimeout: options.connectTimeoutMs,
      // The Sentinels are asked for the master again on every reconnect. A master that was demoted (a
      // planned failover) answers writes with READONLY: that reconnects too, without re-sending the write.
      sentinelRetryStrategy: reconnectDelay,
      reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 1 : false),
      retryStrategy: reconnectDelay,
    });
  }

  return new Redis(config.url, {
    ...connection,
    ...queue,
    ...(config.tls === undefined ? {} : { tls: tlsOptions(config.tls) }),
    retryStrategy: reconnectDelay,
  });
}
