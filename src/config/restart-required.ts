import { isDeepStrictEqual } from 'node:util';
import type { GatewayConfig } from './types.js';

/**
 * Settings read once at start-up (listener, store, audit sink, logger, egress allowlist of user MCP
 * servers, file watcher, console routes): a reload validates them but cannot apply them. `server.maxInFlight`,
 * `maxPublicInFlight` and `bodyTimeoutMs` are not here: admission reads them from the live snapshot.
 */
const START_UP_SETTINGS: ReadonlyArray<readonly string[]> = [
  ['server', 'host'],
  ['server', 'port'],
  ['server', 'bodyLimit'],
  ['server', 'trustProxy'],
  ['server', 'shutdownGraceMs'],
  ['server', 'drainDelayMs'],
  ['server', 'maxConnectionsPerAddress'],
  ['server', 'loadShedding'],
  ['store'],
  ['audit'],
  ['egress', 'allow'],
  ['logging', 'level'],
  ['logging', 'redact'],
  ['logging', 'quietReads'],
  ['reload', 'watch'],
  ['metrics', 'enabled'],
  ['metrics', 'host'],
  ['metrics', 'port'],
  ['console', 'enabled'],
  ['admin', 'auditRecent'],
  ['metrics', 'durationBuckets'],
  ['metrics', 'maxTenantSeries'],
  ['telemetry'],
  ['tenancy', 'compiledCacheSize'],
];

function at(config: GatewayConfig, path: readonly string[]): unknown {
  let value: unknown = config;
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * The start-up settings in which `next` differs from the configuration the process runs with, as
 * dotted paths (`egress.allow`, `audit`). Compared with what is running, not the previous reload, so a
 * change stays listed until a restart applies it.
 */
export function settingsNeedingRestart(running: GatewayConfig, next: GatewayConfig): string[] {
  return START_UP_SETTINGS.filter((path) => !isDeepStrictEqual(at(running, path), at(next, path))).map((path) => path.join('.'));
}
