// Upstream identity (docs/security-model.md#upstream-identity): the credential each upstream call carries,
// decided by the service's `auth` object — the client's own token (clientCredentials), the caller's token
// exchanged for one meant for the upstream (tokenExchange, RFC 8693), or the caller's own connection
// (userOAuth). The caller's inbound token itself never leaves toolgate.
import { createHash } from 'node:crypto';
import * as oauth from 'openid-client';
import type { Registry } from 'prom-client';
import { subjectTokenOf } from '../auth/subject-tokens.js';
import type { GatewayConfig, TenantConfig, UpstreamAuthConfig } from '../config/types.js';
import { ToolError } from '../call/tool-error.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { StateStore } from '../store/types.js';
import type { Principal } from '../call/principal.js';
import type { ServiceCredentials, UpstreamCredential, UpstreamCredentialKind } from '../call/upstream-credential.js';
import type { EgressOptions, Resolve } from '../egress/check-egress.js';
import { createPinnedFetch } from '../egress/pinned-fetch.js';
import { AuthServerError, createAuthServer, discoversThroughService, TOKEN_EXCHANGE, type AuthServer, type DiscoveryTarget, type TokenSet } from './auth-server.js';
import { clientMetadataUrlOf, redirectUriOf } from './client-metadata.js';
import { createConnections, NotConnectedError, type ConnectionTarget, type Connections } from './connections.js';
import { createTokenMetrics, type TokenTarget } from './token-metrics.js';
import { AccessTokenCache } from './token-cache.js';
import { liveVault, type Vault } from './vault.js';

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const MAX_EXCHANGED_TOKENS = 10_000;
/** Authorization-server clients kept (one per distinct auth object and service); the least recently used goes. */
export const MAX_AUTH_SERVERS = 1000;

const KIND_OF: Record<UpstreamAuthConfig['type'], UpstreamCredentialKind> = { clientCredentials: 'service', tokenExchange: 'exchanged', userOAuth: 'user' };

export function tokenHashPrefix(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 12);
}

function credential(token: TokenSet, kind: UpstreamCredentialKind): UpstreamCredential {
  return { authorization: `Bearer ${token.accessToken}`, kind, tokenHash: tokenHashPrefix(token.accessToken) };
}

export interface UpstreamIdentityDeps {
  store: StateStore;
  /** The live configuration (a reload changes services, keys and the public URL). */
  config: () => GatewayConfig;
  metrics?: Registry;
  now?: () => number;
  /** DNS resolution for the egress check of discovered URLs (tests inject one). */
  resolve?: Resolve;
  /** Whether a tenant's pool can hold a tool of the service (`openapi:<name>`): an OpenAPI entry takes connections only there. */
  reachesTools: (tenant: string, service: string) => boolean;
  /** A tenant's configuration, from the file or the state store (default: the file's only). */
  tenantConfig?: (tenant: string) => TenantConfig | undefined;
  /** The userOAuth targets of a user's own registered servers (src/mcp/user/registration-auth.ts). */
  userTargets?: (owner: { tenant: string; user: string }) => Promise<ConnectionTarget[]>;
  /** The egress policy of users' URLs: their authorization servers are reached only through it. */
  userEgress?: EgressOptions;
  /** The live vault (default: one over `config().credentials`), shared with whoever else seals with it. */
  vault?: () => Vault;
  /** Authorization-server clients kept (default MAX_AUTH_SERVERS). */
  maxAuthServers?: number;
}

/** A user's own registered server (its auth is the user's, its URLs too). */
export type UserServerRef = NonNullable<ConnectionTarget['userServer']>;

export interface UpstreamIdentity {
  /**
   * The credentials of one service: what providers hand their tools. `userServer`: a user's own server,
   * whose session traffic carries the owner's own credential and whose authorization server is the user's.
   */
  credentialsFor(service: string, auth: UpstreamAuthConfig, userServer?: UserServerRef): ServiceCredentials;
  readonly connections: Connections;
  /** The userOAuth services a user reaches: the tenant's in the live config and the user's own servers. */
  targets(owner: { tenant: string; user: string }): Promise<ConnectionTarget[]>;
  /** The live vault (users' client secrets are sealed with it). */
  vault(): Vault;
}

/**
 * The userOAuth services a tenant reaches in a config: its global MCP services (`mcpServices`), and the OpenAPI
 * entries whose tools its pool can hold (`reachesTools`: its `functions` and `tools.allow` globs admit one).
 */
export function connectionTargets(
  config: GatewayConfig,
  tenant: string,
  reachesTools: (tenant: string, service: string) => boolean,
  tenantConfig: TenantConfig | undefined = Object.hasOwn(config.tenants, tenant) ? config.tenants[tenant] : undefined,
): ConnectionTarget[] {
  if (!tenantConfig) return [];
  const reached = new Set(tenantConfig.mcpServices);
  const mcp = config.mcp.global.flatMap((entry) => ('auth' in entry && entry.auth?.type === 'userOAuth' && reached.has(entry.id) ? [{ service: entry.id, auth: entry.auth }] : []));
  const apis = config.openapi.flatMap((entry) => (entry.auth?.type === 'userOAuth' && reachesTools(tenant, `openapi:${entry.name}`) ? [{ service: entry.name, auth: entry.auth }] : []));
  return [...mcp, ...apis];
}

export function createUpstreamIdentity(deps: UpstreamIdentityDeps): UpstreamIdentity {
  const tenantConfigOf = (tenant: string): TenantConfig | undefined => {
    if (deps.tenantConfig) return deps.tenantConfig(tenant);
    const { tenants } = deps.config();
    return Object.hasOwn(tenants, tenant) ? tenants[tenant] : undefined;
  };
  const tenantTargets = (tenant: string): ConnectionTarget[] => connectionTargets(deps.config(), tenant, deps.reachesTools, tenantConfigOf(tenant));
  const now = deps.now ?? Date.now;
  const metrics = createTokenMetrics(deps.metrics);
  // One client per distinct auth object: its discovery, breaker and cached service tokens outlive reloads.
  const servers = new Map<string, AuthServer>();
  const serviceTokens = new AccessTokenCache(1000, now);
  const exchanged = new AccessTokenCache(MAX_EXCHANGED_TOKENS, now);

  /** A remote MCP service's URL and the live egress policy, when its `auth` finds the server through it. */
  function discoveryTarget(service: string, auth: UpstreamAuthConfig): DiscoveryTarget | undefined {
    if (!discoversThroughService(auth)) return undefined;
    const config = deps.config();
    const entry = config.mcp.global.find((candidate) => candidate.id === service);
    if (!entry || !('url' in entry)) return undefined;
    const publicUrl = config.server.publicUrl;
    return {
      serviceUrl: entry.url,
      egress: { allow: config.egress.allow, ...(deps.resolve ? { resolve: deps.resolve } : {}) },
      registration: { deps: { store: deps.store, vault }, service, ...(publicUrl ? { redirectUri: redirectUriOf(publicUrl), clientMetadataUrl: clientMetadataUrlOf(publicUrl) } : {}) },
    };
  }

  const userFetch = deps.userEgress ? createPinnedFetch(deps.userEgress).fetch : undefined;

  function serverFor(service: string, auth: UpstreamAuthConfig, userServer?: UserServerRef): AuthServer {
    // A user's server never discovers through its URL: its auth names the server, reached through the egress policy.
    const discovery = userServer ? undefined : discoveryTarget(service, auth);
    // What is discovered belongs to one service URL under one egress policy; a user's client is theirs alone.
    const key = JSON.stringify([auth, discovery?.serviceUrl, discovery?.egress.allow, userServer]);
    let server = servers.get(key);
    if (server) {
      // Map order is the LRU order.
      servers.delete(key);
      servers.set(key, server);
      return server;
    }
    if (userServer && !userFetch) throw new AuthServerError('refused', "a user's own server needs the egress policy");
    server = createAuthServer(auth, { now, ...(discovery ? { discovery } : {}), ...(userServer && userFetch ? { fetch: userFetch } : {}) });
    servers.set(key, server);
    for (const oldest of servers.keys()) {
      if (servers.size <= (deps.maxAuthServers ?? MAX_AUTH_SERVERS)) break;
      servers.delete(oldest);
    }
    return server;
  }

  const vault = deps.vault ?? liveVault(deps.config);

  async function targets(owner: { tenant: string; user: string }): Promise<ConnectionTarget[]> {
    const configured = tenantTargets(owner.tenant);
    return deps.userTargets && tenantConfigOf(owner.tenant) ? [...configured, ...(await deps.userTargets(owner))] : configured;
  }

  const connections = createConnections({
    store: deps.store,
    get vault() {
      return vault();
    },
    publicUrl: () => deps.config().server.publicUrl,
    serverFor: ({ service, auth, userServer }) => serverFor(service, auth, userServer),
    targets: (owner) => targets(owner),
    tenantTargets,
    tokenRequests: { fetched: (target) => metrics.fetched(target, 'user'), failed: (target) => metrics.failed(target, 'user') },
    now,
  });

  /** Runs one token request, counting it; an authorization-server failure becomes the call's ToolError. */
  async function fetched(target: TokenTarget, kind: UpstreamCredentialKind, request: () => Promise<TokenSet>): Promise<TokenSet> {
    try {
      const token = await request();
      metrics.fetched(target, kind);
      return token;
    } catch (error) {
      if (!(error instanceof NotConnectedError)) metrics.failed(target, kind);
      throw error;
    }
  }

  async function clientToken(service: string, auth: UpstreamAuthConfig, userServer?: UserServerRef): Promise<TokenSet> {
    const server = serverFor(service, auth, userServer);
    const key = JSON.stringify([auth, discoversThroughService(auth) ? service : undefined, userServer]);
    const { token } = await serviceTokens.get(key, () =>
      fetched({ service, ...(userServer ? { userServer } : {}) }, 'service', async () => server.tokenSet(await server.run('client credentials', (config) => oauth.clientCredentialsGrant(config, { ...(auth.scopes.length > 0 ? { scope: auth.scopes.join(' ') } : {}), ...server.tokenParameters })), now())),
    );
    return token;
  }

  async function exchangedToken(service: string, auth: UpstreamAuthConfig, principal: Principal): Promise<TokenSet> {
    const subject = subjectTokenOf(principal);
    if (subject === undefined) {
      throw new ToolError('PERMISSION_DENIED', `${service} acts on behalf of the caller (token exchange), which needs a caller authenticated by JWT; API keys have no token to exchange`, { permanent: true });
    }
    const server = serverFor(service, auth);
    const exp = principal.claims.exp;
    // Per tenant, user and service; the subject token's hash too, so a new inbound token (new roles) is exchanged anew.
    const key = JSON.stringify([principal.tenant, principal.user, service, JSON.stringify(auth), tokenHashPrefix(subject)]);
    const { token } = await exchanged.get(
      key,
      () =>
        fetched({ service }, 'exchanged', async () =>
          server.tokenSet(
            await server.run('token exchange', (config) =>
              oauth.genericGrantRequest(config, TOKEN_EXCHANGE, {
                subject_token: subject,
                subject_token_type: ACCESS_TOKEN_TYPE,
                requested_token_type: ACCESS_TOKEN_TYPE,
                ...(auth.scopes.length > 0 ? { scope: auth.scopes.join(' ') } : {}),
                ...server.tokenParameters,
              }),
            ),
            now(),
          ),
        ),
      typeof exp === 'number' ? exp * 1000 : undefined,
    );
    return token;
  }

  /** The ToolError a failure to obtain a credential answers the call with. */
  async function failure(error: unknown, service: string, principal: Principal): Promise<ToolError> {
    if (error instanceof ToolError) return error;
    if (error instanceof NotConnectedError) {
      const trace: Record<string, unknown> = { service, reason: error.message, connect: `POST /v1/connections/${service}` };
      try {
        trace.authorizationUrl = (await connections.start(principal, service)).authorizationUrl;
      } catch {
        // The URL is a convenience: the tool error still names the service and how to connect.
      }
      // The link goes in the model-visible message too: the model relays it to the user, who opens it.
      const how = typeof trace.authorizationUrl === 'string' ? `open ${trace.authorizationUrl} to connect, then call again` : `connect with ${String(trace.connect)}, then call again`;
      return new ToolError('CONNECTION_REQUIRED', `${service} acts as you: connect your account first (${error.message}): ${how}`, { trace, permanent: true });
    }
    if (isStoreUnavailable(error)) return new ToolError('UPSTREAM_ERROR', `${service}: the credential store is unavailable; the call did not run`, { permanent: true });
    if (error instanceof AuthServerError) {
      return new ToolError('UPSTREAM_ERROR', `${service}: no upstream credential (${error.message})`, { permanent: error.code !== 'unavailable' });
    }
    return new ToolError('UPSTREAM_ERROR', `${service}: no upstream credential`, { permanent: true });
  }

  return {
    connections,
    targets,
    vault,
    credentialsFor(service, auth, userServer) {
      const kind = KIND_OF[auth.type];
      const target: ConnectionTarget = { service, auth, ...(userServer ? { userServer } : {}) };
      return {
        async forCall(principal, signal) {
          try {
            // Defence in depth: a user's server is only ever listed for its owner.
            if (userServer && (principal.tenant !== userServer.tenant || principal.user !== userServer.sub)) {
              throw new ToolError('PERMISSION_DENIED', 'this server belongs to another user', { permanent: true });
            }
            switch (auth.type) {
              case 'clientCredentials':
                return credential(await clientToken(service, auth, userServer), kind);
              case 'tokenExchange':
                // Never for a user's own server (refused at registration): the URL is the user's choice.
                if (userServer) throw new ToolError('PERMISSION_DENIED', "token exchange is not allowed for a user's own server", { permanent: true });
                return credential(await exchangedToken(service, auth, principal), kind);
              case 'userOAuth': {
                return credential(await connections.accessToken(principal, target, signal), kind);
              }
            }
          } catch (error) {
            throw await failure(error, service, principal);
          }
        },
        async forSession() {
          if (userServer) {
            // The owner's own server: its initialize and listing carry the owner's credential when there is
            // one; without a connection yet they go without (the server decides), and start no flow.
            if (auth.type === 'clientCredentials') return credential(await clientToken(service, auth, userServer), 'service');
            if (auth.type !== 'userOAuth') return undefined;
            try {
              return credential(await connections.accessToken({ tenant: userServer.tenant, user: userServer.sub, roles: [], claims: {} }, target), 'user');
            } catch (error) {
              if (error instanceof NotConnectedError) return undefined;
              throw error;
            }
          }
          // The client's own identity lists tools; without a secret the session goes without one. A client
          // registered for client credentials has its own secret.
          const registersForClientCredentials = auth.clientId === undefined && auth.type === 'clientCredentials';
          if (auth.clientSecret === undefined && !registersForClientCredentials) return undefined;
          return credential(await clientToken(service, auth), 'service');
        },
      };
    },
  };
}
