// The UserToolProvider for user-level MCP servers (docs/architecture.md#routing-precedence, precedence 2): a principal sees
// only the tools of the servers registered under its own tenant and raw `sub`, named
// `user_<userKey>_tool_<tool>`. Clients connect lazily on first use and are cached per
// (tenant, sub, serviceId). Registration headers go only to that upstream; the caller's own
// Authorization never does (handlers never see it).
import { createHash } from 'node:crypto';
import { createPinnedFetch, egressRefusalOf, type PinnedFetch } from '../../egress/pinned-fetch.js';
import type { EgressOptions } from '../../egress/check-egress.js';
import { describeError } from '../client/upstream-session.js';
import type { McpService, UserToolProvider, UpstreamStatus } from '../../registry/tool-provider.js';
import type { Logger, Tool } from '../../call/types.js';
import type { Principal } from '../../call/principal.js';
import type { ServiceCredentials } from '../../call/upstream-credential.js';
import { DEFAULT_USER_CATALOG_LIMITS, withinCatalogBytes, type UserCatalogLimits } from './catalog-limits.js';
import { createClientCache } from './client-cache.js';
import type { UpstreamEra } from '../client/upstream-era.js';
import { userServiceKey } from '../../registry/user-names.js';
import { registrationPrefix, tenantRegistrationPrefix, type UserMcpRegistration, type UserMcpRegistrations } from './registrations.js';
import { UserServer, type SizedUserTool } from './user-server.js';

export interface UserMcpProviderDeps {
  registrations: UserMcpRegistrations;
  egress: EgressOptions;
  /** TenantConfig.userMcp.enabled; a tenant without it sees no user-level tools. */
  enabledFor?: (tenant: string) => boolean;
  /** Bound on connected clients across all users (default 256). */
  maxClients?: number;
  /** A client unused this long is closed (default 5 minutes). */
  idleMs?: number;
  /** Connect and tools/list timeout (default 10 s). */
  connectTimeoutMs?: number;
  /** The tenant's `userMcp` bounds on what a user's servers may list, from the live config. */
  limitsFor?: (tenant: string) => UserCatalogLimits;
  /** A server's listing is read again at most this often, however often it says it changed (default 2 s). */
  minRelistMs?: number;
  /** The credentials of a registration with `auth` (the owner's own connection or client). */
  credentialsFor?: (owner: Principal, registration: UserMcpRegistration) => ServiceCredentials | undefined;
}

export interface UserMcpProvider extends UserToolProvider {
  /** Drops a user's cached client (call after PUT/DELETE of a registration). */
  forget(tenant: string, sub: string, serviceId?: string): Promise<void>;
  /** The era of the user's server while this replica holds a connection to it; undefined otherwise. */
  eraOf(tenant: string, sub: string, serviceId: string): UpstreamEra | undefined;
  close(): Promise<void>;
}

/** Shared and frozen: the answer for every caller without servers of their own. */
const NO_TOOLS: readonly Tool[] = Object.freeze([]);
const cacheKey = (tenant: string, sub: string, serviceId: string): string => `${registrationPrefix(tenant, sub)}${serviceId}`;

// Changing the URL, transport or headers of a registration must reconnect; the hash keeps header
// values out of memory dumps of the cache keys.
const fingerprintOf = (registration: UserMcpRegistration): string =>
  createHash('sha256').update(JSON.stringify([registration.url, registration.transport, registration.headers, registration.auth ?? null])).digest('hex');

/** A server that could not be listed: one shared empty list, so the user's combined list stays the same object. */
const UNAVAILABLE: readonly SizedUserTool[] = Object.freeze([]);

/** Two of a user's servers may offer the same name: the older registration (listed first) wins, deterministically. */
function oldestFirstWins(perService: ReadonlyArray<readonly SizedUserTool[]>, log: Logger): SizedUserTool[][] {
  const seen = new Set<string>();
  return perService.map((tools) =>
    tools.filter(({ tool }) => {
      if (seen.has(tool.name)) {
        log.warn({ tool: tool.name, service: tool.service }, 'user MCP tool shadowed by an older registration');
        return false;
      }
      seen.add(tool.name);
      return true;
    }),
  );
}

interface Combined {
  parts: ReadonlyArray<readonly SizedUserTool[]>;
  limits: UserCatalogLimits;
  tools: readonly Tool[];
}

/**
 * Logged without URL or headers: both belong to the user. An egress refusal at connect time adds its reason
 * here, and only here: the caller hears the one wording (docs/security-model.md#egress).
 */
function logUnavailable(log: Logger, principal: Principal, registration: UserMcpRegistration, error: unknown): void {
  const egressReason = egressRefusalOf(error)?.reason;
  log.warn({ service: userServiceKey(principal.user, registration.serviceId), err: describeError(error), ...(egressReason === undefined ? {} : { egressReason }) }, 'user MCP server unavailable');
}

export function createUserMcpProvider(deps: UserMcpProviderDeps): UserMcpProvider {
  const timeoutMs = deps.connectTimeoutMs ?? 10_000;
  const idleMs = deps.idleMs ?? 5 * 60_000;
  const pinned: PinnedFetch = createPinnedFetch(deps.egress);
  const cache = createClientCache<UserServer>({
    maxEntries: Math.max(1, deps.maxClients ?? 256),
    idleMs,
    close: (server) => server.close(),
  });
  const sweeper = setInterval(() => void cache.evictIdle(), Math.max(1000, Math.floor(idleMs / 2)));
  sweeper.unref();

  /** The connected server for one registration, opened on first use and shared by concurrent callers. */
  function serverFor(owner: Principal, registration: UserMcpRegistration, log: Logger): Promise<UserServer> {
    const key = cacheKey(owner.tenant, owner.user, registration.serviceId);
    const current = (): Promise<UserServer> =>
      cache.get(key, fingerprintOf(registration), () => {
        const credentials = deps.credentialsFor?.(owner, registration);
        return UserServer.open({
          owner,
          registration,
          fetch: pinned.fetch,
          ...(credentials ? { credentials } : {}),
          timeoutMs,
          log,
          // A dropped connection is forgotten, so the next listing or call reconnects.
          onLost: (server) => void cache.evictIfCurrent(key, server),
          current,
          minRelistMs: deps.minRelistMs ?? 2000,
        });
      });
    return current();
  }

  async function toolsOf(principal: Principal, registration: UserMcpRegistration, limits: UserCatalogLimits, log: Logger): Promise<readonly SizedUserTool[]> {
    try {
      return await (await serverFor(principal, registration, log)).tools(limits);
    } catch (error) {
      // One broken server hides only its own tools.
      logUnavailable(log, principal, registration, error);
      await cache.evict(cacheKey(principal.tenant, principal.user, registration.serviceId));
      return UNAVAILABLE;
    }
  }

  // The user's combined list, by the first server's list: each server returns the same array until its
  // listing changes, so combining (and every pool built on the result) happens once per change, not per
  // request. Weakly held: it goes when the servers' lists do.
  const combined = new WeakMap<object, Combined>();

  async function toolsOfAll(principal: Principal, registrations: readonly UserMcpRegistration[], log: Logger): Promise<readonly Tool[]> {
    const limits = deps.limitsFor?.(principal.tenant) ?? DEFAULT_USER_CATALOG_LIMITS;
    const parts = await Promise.all(registrations.map((registration) => toolsOf(principal, registration, limits, log)));
    const known = combined.get(parts[0]!);
    if (known && known.limits === limits && known.parts.length === parts.length && known.parts.every((part, index) => part === parts[index])) return known.tools;
    const tools = Object.freeze(withinCatalogBytes(oldestFirstWins(parts, log), limits.maxCatalogBytes, log));
    combined.set(parts[0]!, { parts, limits, tools });
    return tools;
  }

  // A user without registrations shares one frozen empty list.
  async function toolsFrom(principal: Principal, registrations: readonly UserMcpRegistration[], log: Logger): Promise<readonly Tool[]> {
    return registrations.length === 0 ? NO_TOOLS : toolsOfAll(principal, registrations, log);
  }

  return {
    kind: 'user-mcp',
    // One store read per listing, and per call the caller's own tools can change (callNeedsOwnTools).
    async toolsFor(principal, log) {
      if (deps.enabledFor && !deps.enabledFor(principal.tenant)) return NO_TOOLS;
      return toolsFrom(principal, await deps.registrations.list(principal.tenant, principal.user), log);
    },
    async servicesFor(principal, log) {
      if (deps.enabledFor && !deps.enabledFor(principal.tenant)) return [];
      const registrations = await deps.registrations.list(principal.tenant, principal.user);
      return registrations.map((registration): McpService => ({
        scope: 'user',
        service: registration.serviceId,
        client: async () => {
          try {
            return (await serverFor(principal, registration, log)).client;
          } catch (error) {
            logUnavailable(log, principal, registration, error);
            await cache.evict(cacheKey(principal.tenant, principal.user, registration.serviceId));
            return undefined;
          }
        },
      }));
    },
    eraOf(tenant, sub, serviceId) {
      return cache.peek(cacheKey(tenant, sub, serviceId))?.era;
    },
    async forget(tenant, sub, serviceId) {
      if (serviceId === undefined) await cache.evictPrefix(registrationPrefix(tenant, sub));
      else await cache.evict(cacheKey(tenant, sub, serviceId));
    },
    status(tenant): UpstreamStatus[] {
      // One aggregate row: per-user rows would show one tenant's user keys to another tenant's admin, and a
      // tenant's admin counts its own users' clients only (the total would tell of other tenants' activity).
      const connectedClients = tenant === undefined ? cache.size : cache.countPrefix(tenantRegistrationPrefix(tenant));
      return [{ service: 'user-mcp', kind: 'user-mcp', state: 'ready', required: false, toolCount: 0, detail: { connectedClients } }];
    },
    async close() {
      clearInterval(sweeper);
      await cache.closeAll();
      pinned.close();
    },
  };
}
