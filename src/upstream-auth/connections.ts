// Users' own connections to userOAuth services (docs/security-model.md#upstream-identity): the
// authorization-code flow with PKCE, and the tokens it yields kept sealed in the state store, so every
// replica uses a connection the moment any replica made it. The store holds no token in plaintext: refresh
// and access tokens are vault ciphertexts bound to their tenant, user and service.
import { DomainError, type ErrorCode } from '../errors.js';
import { createHash, randomUUID } from 'node:crypto';
import * as oauth from 'openid-client';
import type { UpstreamAuthConfig } from '../config/types.js';
import { deleteIfUnchanged } from '../store/delete-if-unchanged.js';
import type { StateStore } from '../store/types.js';
import type { Principal } from '../call/principal.js';
import { AuthServerError, type AuthServer, type TokenSet } from './auth-server.js';
import { redirectUriOf } from './client-metadata.js';
import { freshUntil } from './token-cache.js';
import { VaultError, type Vault } from './vault.js';

/** How long a started connect flow (its `state`) may be completed. */
export const FLOW_TTL_MS = 10 * 60_000;
/** Users listed per tenant and service for admins; connecting beyond it still works, the listing is capped. */
const MAX_INDEXED_USERS = 10_000;
/** Rows of one admin listing (each a store read). */
const MAX_LISTED = 1000;
const INDEX_RETRIES = 8;
/** Connect flows one user may have open per service at once. */
const MAX_PENDING_FLOWS = 3;
const LEASE_POLL_MS = 100;

/** A service whose calls need the caller's own connection. */
export interface ConnectionTarget {
  service: string;
  auth: UpstreamAuthConfig;
  /** A user's own registered server: its authorization server is the user's, reached through the egress policy. */
  userServer?: { tenant: string; sub: string; serviceId: string };
}

/** The caller has no (usable) connection to the service: the call answers CONNECTION_REQUIRED. */
export class NotConnectedError extends Error {
  constructor(readonly service: string, reason: string) {
    super(reason);
    this.name = 'NotConnectedError';
  }
}

export type FlowErrorCode = 'invalid_state' | 'expired' | 'denied' | 'exchange_failed';

/** A callback that completes nothing. The message is safe to show (no token, nothing echoed raw). */
export class FlowError extends DomainError {
  constructor(readonly code: FlowErrorCode, message: string) {
    super(message);
    this.name = 'FlowError';
  }

  /** The token exchange failed upstream; every other refusal is the callback's own fault. */
  get gatewayCode(): ErrorCode {
    return this.code === 'exchange_failed' ? 'TG_UPSTREAM_ERROR' : 'TG_BAD_REQUEST';
  }
}

interface FlowRecord {
  tenant: string;
  user: string;
  service: string;
  /** The PKCE verifier, sealed. */
  verifier: string;
  expiresAt: number;
  /** The authorization server the flow was started at: its code goes back there only. */
  issuer?: string;
}

interface ConnectionRecord {
  tenant: string;
  user: string;
  service: string;
  access: string;
  refresh?: string;
  expiresAt?: number;
  scopes: string[];
  connectedAt: number;
  refreshedAt: number;
  /** The authorization server that issued the tokens: they go back there only. */
  issuer?: string;
}

export interface ConnectionStatus {
  service: string;
  connected: boolean;
  scopes: string[];
  expiresAt: string | null;
  connectedAt: string | null;
}

export interface ConnectedUser {
  service: string;
  user: string;
  connectedAt: string;
  expiresAt: string | null;
}

export interface ConnectionsDeps {
  store: StateStore;
  /** Read on every use: a reload may rotate keys. */
  readonly vault: Vault;
  /** `server.publicUrl` of the live config (the redirect URI's base). */
  publicUrl: () => string | undefined;
  serverFor: (target: ConnectionTarget) => AuthServer;
  /** The userOAuth services a user reaches: the tenant's in the live config, and the user's own servers. */
  targets: (owner: { tenant: string; user: string }) => Promise<ConnectionTarget[]>;
  /** The tenant's userOAuth services in the live config (admins' listing). */
  tenantTargets: (tenant: string) => ConnectionTarget[];
  /** Counts token requests (code exchanges, refreshes) by service. */
  tokenRequests?: { fetched(target: ConnectionTarget): void; failed(target: ConnectionTarget): void };
  now?: () => number;
}

const enc = (value: string): string => Buffer.from(value, 'utf8').toString('base64url');
const digest = (value: string): string => createHash('sha256').update(value).digest('base64url');
const connectionKey = (tenant: string, user: string, service: string): string => `uauth:conn:${enc(tenant)}:${enc(user)}:${service}`;
const leaseKey = (tenant: string, user: string, service: string): string => `uauth:lease:${enc(tenant)}:${enc(user)}:${service}`;
const pendingKey = (tenant: string, user: string, service: string): string => `uauth:pending:${enc(tenant)}:${enc(user)}:${service}`;
const indexKey = (tenant: string, service: string): string => `uauth:index:${enc(tenant)}:${service}`;
const flowKey = (stateHash: string): string => `uauth:flow:${stateHash}`;
/** Authenticated data of a sealed token: it opens only under the record it was written for. */
const sealContext = (record: Pick<ConnectionRecord, 'tenant' | 'user' | 'service'>, part: 'access' | 'refresh'): string => [record.tenant, record.user, record.service, part].join('\u0000');

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

function parseJson<T>(raw: string): T | undefined {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    }, { once: true });
  });
}

const SERVER_MOVED = 'the service now names another authorization server than the one the connection was made with';

/**
 * A code or token goes back only to the authorization server that issued it: a service whose server is
 * discovered may name another one later. A record without an issuer predates the binding; it is trusted only
 * where the operator names the server.
 */
function checkIssuer(server: AuthServer, config: oauth.Configuration, issuer: string | undefined): void {
  if (issuer === undefined ? server.discovers : issuer !== config.serverMetadata().issuer) throw new AuthServerError('invalid_grant', SERVER_MOVED);
}

/** The one redirect URI of every connect flow (and of a registered client). */

export function createConnections(deps: ConnectionsDeps) {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  const inFlight = new Map<string, Promise<TokenSet>>();

  function redirectUri(): string {
    const base = deps.publicUrl();
    if (!base) throw new FlowError('invalid_state', 'server.publicUrl is not configured');
    return redirectUriOf(base);
  }

  async function target(owner: { tenant: string; user: string }, service: string): Promise<ConnectionTarget | undefined> {
    return (await deps.targets(owner)).find((candidate) => candidate.service === service);
  }

  /** The index lives while it names someone: an emptied one is deleted, never left behind without a TTL. */
  async function updateIndex(tenant: string, service: string, change: (users: string[]) => string[]): Promise<void> {
    const key = indexKey(tenant, service);
    for (let attempt = 0; attempt < INDEX_RETRIES; attempt += 1) {
      const raw = await store.get(key);
      const users = change((raw === null ? [] : parseJson<string[]>(raw)) ?? []).slice(0, MAX_INDEXED_USERS);
      if (users.length === 0) {
        if (raw === null || (await deleteIfUnchanged(store, key, raw))) return;
        continue;
      }
      const next = JSON.stringify(users);
      if (raw === null ? await store.setIfAbsent(key, next) : await store.compareAndSet(key, raw, next)) return;
    }
  }

  function sealTokens(base: Omit<ConnectionRecord, 'access' | 'refresh' | 'expiresAt' | 'scopes' | 'refreshedAt'>, tokens: TokenSet, previousRefresh: string | undefined): ConnectionRecord {
    return {
      ...base,
      access: deps.vault.seal(tokens.accessToken, sealContext(base, 'access')),
      ...(tokens.refreshToken !== undefined ? { refresh: deps.vault.seal(tokens.refreshToken, sealContext(base, 'refresh')) } : previousRefresh !== undefined ? { refresh: previousRefresh } : {}),
      ...(tokens.expiresAt !== undefined ? { expiresAt: tokens.expiresAt } : {}),
      scopes: tokens.scopes,
      refreshedAt: now(),
    };
  }

  /** The stored record of exactly this principal and service (a record naming anyone else is ignored). */
  async function read(principal: Principal, service: string): Promise<{ raw: string; record: ConnectionRecord } | undefined> {
    const raw = await store.get(connectionKey(principal.tenant, principal.user, service));
    const record = raw === null ? undefined : parseJson<ConnectionRecord>(raw);
    if (raw === null || !record || record.tenant !== principal.tenant || record.user !== principal.user || record.service !== service) return undefined;
    return { raw, record };
  }

  function isFresh(record: ConnectionRecord): boolean {
    return freshUntil(record, record.refreshedAt) > now();
  }

  /** A sealed token of the record; one that no longer opens (its key was rotated out) needs a new connection. */
  function unseal(record: ConnectionRecord, sealed: string, part: 'access' | 'refresh'): string {
    try {
      return deps.vault.open(sealed, sealContext(record, part));
    } catch (error) {
      if (error instanceof VaultError) throw new NotConnectedError(record.service, 'the stored connection no longer opens (its key was removed)');
      throw error;
    }
  }

  function openAccess(record: ConnectionRecord): TokenSet {
    return { accessToken: unseal(record, record.access, 'access'), ...(record.expiresAt !== undefined ? { expiresAt: record.expiresAt } : {}), scopes: record.scopes };
  }

  async function forget(principal: Principal, service: string): Promise<void> {
    await store.delete(connectionKey(principal.tenant, principal.user, service));
    await updateIndex(principal.tenant, service, (users) => users.filter((user) => user !== principal.user));
  }

  /** Refreshes under a lease in the store, so two replicas never spend the same (rotating) refresh token. */
  async function refreshed(principal: Principal, goal: ConnectionTarget, server: AuthServer, signal?: AbortSignal): Promise<TokenSet> {
    const lease = leaseKey(principal.tenant, principal.user, goal.service);
    const deadline = now() + goal.auth.timeoutMs + 2000;
    while (now() < deadline) {
      const current = await read(principal, goal.service);
      if (!current) throw new NotConnectedError(goal.service, 'not connected');
      if (isFresh(current.record)) return openAccess(current.record);
      if (current.record.refresh === undefined) {
        await forget(principal, goal.service);
        throw new NotConnectedError(goal.service, 'the connection expired and has no refresh token');
      }
      const id = randomUUID();
      if (await store.setIfAbsent(lease, id, { ttlMs: goal.auth.timeoutMs + 2000 })) {
        try {
          // Read again under the lease: another replica may have refreshed between the read above and the lease.
          const held = await read(principal, goal.service);
          if (!held) throw new NotConnectedError(goal.service, 'not connected');
          if (isFresh(held.record)) return openAccess(held.record);
          const refreshToken = unseal(held.record, held.record.refresh as string, 'refresh');
          let tokens: TokenSet;
          try {
            const response = await server.run('refresh', (config) => {
              checkIssuer(server, config, held.record.issuer);
              return oauth.refreshTokenGrant(config, refreshToken, server.tokenParameters);
            });
            tokens = server.tokenSet(response, now());
            deps.tokenRequests?.fetched(goal);
          } catch (error) {
            deps.tokenRequests?.failed(goal);
            if (error instanceof AuthServerError && error.code === 'invalid_grant') {
              await forget(principal, goal.service);
              throw new NotConnectedError(goal.service, error.message.endsWith(SERVER_MOVED) ? SERVER_MOVED : 'the authorization server refused the refresh token (revoked or expired)');
            }
            throw error;
          }
          const next = sealTokens(held.record, tokens, held.record.refresh);
          if (!(await store.compareAndSet(connectionKey(principal.tenant, principal.user, goal.service), held.raw, JSON.stringify(next)))) {
            throw new NotConnectedError(goal.service, 'the connection was removed while it was refreshed');
          }
          return tokens;
        } finally {
          if ((await store.get(lease).catch(() => null)) === id) await store.delete(lease).catch(() => false);
        }
      }
      // Another replica holds the lease: its refreshed token lands in the record.
      await sleep(LEASE_POLL_MS, signal);
    }
    throw new AuthServerError('unavailable', 'a refresh in progress elsewhere did not finish in time');
  }

  return {
    /** Starts a connect flow for the caller: a single-use `state` bound to them, expiring in FLOW_TTL_MS. */
    async start(principal: Principal, service: string): Promise<{ authorizationUrl: string; expiresAt: string }> {
      const goal = await target(principal, service);
      if (!goal) throw new NotConnectedError(service, 'no such service needs a connection');
      const server = deps.serverFor(goal);
      const config = await server.run('discovery', async (configuration) => configuration);
      const verifier = oauth.randomPKCECodeVerifier();
      const state = oauth.randomState();
      const stateHash = digest(state);
      const expiresAt = now() + FLOW_TTL_MS;
      const flow: FlowRecord = { tenant: principal.tenant, user: principal.user, service, verifier: deps.vault.seal(verifier, `flow\u0000${stateHash}`), expiresAt, issuer: config.serverMetadata().issuer };
      await store.set(flowKey(stateHash), JSON.stringify(flow), { ttlMs: FLOW_TTL_MS });
      // A few pending flows per user and service (a call needing the connection starts one, and must not end
      // the one the user is completing in the browser); starting more ends the oldest.
      const pending = pendingKey(principal.tenant, principal.user, service);
      const raw = await store.get(pending);
      const open = [...((raw === null ? [] : parseJson<string[]>(raw)) ?? []), stateHash];
      for (const ended of open.splice(0, Math.max(0, open.length - MAX_PENDING_FLOWS))) await store.delete(flowKey(ended));
      await store.set(pending, JSON.stringify(open), { ttlMs: FLOW_TTL_MS });
      const url = oauth.buildAuthorizationUrl(config, {
        response_type: 'code',
        redirect_uri: redirectUri(),
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        ...(goal.auth.scopes.length > 0 ? { scope: goal.auth.scopes.join(' ') } : {}),
        ...server.tokenParameters,
      });
      return { authorizationUrl: url.href, expiresAt: new Date(expiresAt).toISOString() };
    },

    /**
     * Completes a flow from the callback's query. The flow's own record says whose connection it is: the
     * request carries no principal, and nothing in it can name another user.
     */
    async complete(query: URLSearchParams): Promise<{ tenant: string; user: string; service: string }> {
      const state = query.get('state');
      if (state === null || state.length === 0 || state.length > 512) throw new FlowError('invalid_state', 'missing or malformed state');
      const stateHash = digest(state);
      const raw = await store.get(flowKey(stateHash));
      // Single use: of two callbacks with one state, only the one whose delete removed the record goes on.
      if (raw === null || !(await store.delete(flowKey(stateHash)))) throw new FlowError('invalid_state', 'unknown, expired or already used state');
      const flow = parseJson<FlowRecord>(raw);
      if (!flow) throw new FlowError('invalid_state', 'unknown, expired or already used state');
      if (flow.expiresAt <= now()) throw new FlowError('expired', 'the connect flow expired; start it again');
      const goal = await target(flow, flow.service);
      if (!goal) throw new FlowError('invalid_state', 'the service no longer takes connections');
      const denied = query.get('error');
      if (denied !== null) throw new FlowError('denied', `the authorization server did not grant access (${/^[a-z_]{1,64}$/.test(denied) ? denied : 'error'})`);
      const verifier = deps.vault.open(flow.verifier, `flow\u0000${stateHash}`);
      const server = deps.serverFor(goal);
      // The URL the server redirected to, rebuilt on the configured public URL (never the request's Host).
      const current = new URL(redirectUri());
      for (const [name, value] of query) current.searchParams.append(name, value);
      let tokens: TokenSet;
      let issuer: string | undefined;
      try {
        const response = await server.run('code exchange', (config) => {
          checkIssuer(server, config, flow.issuer);
          issuer = config.serverMetadata().issuer;
          return oauth.authorizationCodeGrant(config, current, { pkceCodeVerifier: verifier, expectedState: state }, server.tokenParameters);
        });
        tokens = server.tokenSet(response, now());
        deps.tokenRequests?.fetched(goal);
      } catch (error) {
        deps.tokenRequests?.failed(goal);
        throw new FlowError('exchange_failed', error instanceof Error ? error.message : 'code exchange failed');
      }
      const owner = { tenant: flow.tenant, user: flow.user, service: flow.service };
      const record = sealTokens({ ...owner, connectedAt: now(), ...(issuer !== undefined ? { issuer } : {}) }, tokens, undefined);
      await store.set(connectionKey(owner.tenant, owner.user, owner.service), JSON.stringify(record));
      await store.delete(pendingKey(owner.tenant, owner.user, owner.service));
      await updateIndex(owner.tenant, owner.service, (users) => [owner.user, ...users.filter((user) => user !== owner.user)]);
      return owner;
    },

    /** A usable access token of the caller for the service, refreshed when it has expired. */
    async accessToken(principal: Principal, goal: ConnectionTarget, signal?: AbortSignal): Promise<TokenSet> {
      const current = await read(principal, goal.service);
      if (!current) throw new NotConnectedError(goal.service, 'not connected');
      if (isFresh(current.record)) return openAccess(current.record);
      // Calls of one user on this replica share one refresh.
      const key = connectionKey(principal.tenant, principal.user, goal.service);
      let flight = inFlight.get(key);
      if (!flight) {
        flight = refreshed(principal, goal, deps.serverFor(goal), signal).finally(() => inFlight.delete(key));
        inFlight.set(key, flight);
      }
      return flight;
    },

    /** The caller's userOAuth services and whether each is connected; never a token. */
    async list(principal: Principal): Promise<ConnectionStatus[]> {
      return Promise.all(
        (await deps.targets(principal)).map(async ({ service }) => {
          const found = await read(principal, service);
          return found
            ? { service, connected: true, scopes: found.record.scopes, expiresAt: iso(found.record.expiresAt), connectedAt: iso(found.record.connectedAt) }
            : { service, connected: false, scopes: [], expiresAt: null, connectedAt: null };
        }),
      );
    },

    /** Forgets the caller's connection and revokes its token at the server (RFC 7009) where offered. */
    async remove(principal: Principal, service: string): Promise<{ removed: boolean; revoked: boolean }> {
      const goal = await target(principal, service);
      if (!goal) return { removed: false, revoked: false };
      const found = await read(principal, service);
      if (!found) return { removed: false, revoked: false };
      await forget(principal, service);
      const { record } = found;
      const token = record.refresh !== undefined ? deps.vault.open(record.refresh, sealContext(record, 'refresh')) : deps.vault.open(record.access, sealContext(record, 'access'));
      const server = deps.serverFor(goal);
      try {
        const config = await server.configuration();
        if (!config.serverMetadata().revocation_endpoint) return { removed: true, revoked: false };
        await server.run('revocation', (configuration) => {
          checkIssuer(server, configuration, record.issuer);
          return oauth.tokenRevocation(configuration, token, { token_type_hint: record.refresh !== undefined ? 'refresh_token' : 'access_token' });
        });
        return { removed: true, revoked: true };
      } catch {
        return { removed: true, revoked: false };
      }
    },

    /**
     * Forgets a connection whose service changed under it (a user's own server re-registered elsewhere, or
     * removed): its token is never sent to the new URL, and no record outlives the server.
     */
    async forget(owner: { tenant: string; user: string }, service: string): Promise<void> {
      await forget({ ...owner, roles: [], claims: {} }, service);
    },

    /** Who in the tenant is connected to its userOAuth services (admins); never a token. */
    async connectedUsers(tenant: string): Promise<ConnectedUser[]> {
      const rows: ConnectedUser[] = [];
      for (const { service } of deps.tenantTargets(tenant)) {
        const raw = await store.get(indexKey(tenant, service));
        for (const user of ((raw === null ? [] : parseJson<string[]>(raw)) ?? []).slice(0, MAX_LISTED - rows.length)) {
          const found = await read({ tenant, user, roles: [], claims: {} }, service);
          if (found) rows.push({ service, user, connectedAt: iso(found.record.connectedAt) ?? '', expiresAt: iso(found.record.expiresAt) });
        }
      }
      return rows;
    },
  };
}

export type Connections = ReturnType<typeof createConnections>;
