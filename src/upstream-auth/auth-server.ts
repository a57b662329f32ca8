// An upstream's authorization server, spoken to with openid-client (docs/configuration.md#upstream-identity):
// discovery or explicit endpoints, and every request bounded — a deadline, a cap on the answer's size, and a
// breaker per server — so a slow, dead or hostile token endpoint costs a call a bounded wait, never the gateway.
import * as oauth from 'openid-client';
import { trustedIssuersOf } from '../config/discovered-issuers.js';
import type { UpstreamAuthConfig } from '../config/types.js';
import type { EgressOptions } from '../egress/check-egress.js';
import { createPinnedFetch, egressRefusalOf, type FetchLike } from '../egress/pinned-fetch.js';
import { AuthServerError } from './auth-server-error.js';
import { createCircuit, type Circuit, type CircuitOptions } from '../pipeline/circuit-state.js';
import { acceptsClientMetadataDocument } from './client-metadata.js';
import { forgetRegisteredClient, registeredClient, type ClientRegistrationDeps, type RegisteredClient } from './client-registration.js';
import { discoverAuthServer, registerAtServer, type DiscoveredAuthServer } from './discovery.js';

export { AuthServerError, type AuthServerErrorCode } from './auth-server-error.js';

/** Token endpoint answers are small JSON objects; anything larger is refused unread. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
// One breaker per server (the call breakers' state machine): after 5 failures in a row its token endpoint is
// not asked for 30 s, then one request probes it. In process memory, like the call breakers.
const BREAKER: CircuitOptions = { failureThreshold: 5, cooldownMs: 30_000 };

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** ms since epoch; undefined when the server did not say. */
  expiresAt?: number;
  scopes: string[];
}

export interface AuthServer {
  /** Whether the server is found through the service's own metadata (so it may change), not named by the operator. */
  readonly discovers: boolean;
  configuration(): Promise<oauth.Configuration>;
  /** The extra parameters of every token request (`resource`, `audience`); read after `configuration()`. */
  readonly tokenParameters: Record<string, string>;
  /** Runs one request to the server, mapping every failure to an AuthServerError. */
  run<T>(what: string, request: (config: oauth.Configuration) => Promise<T>): Promise<T>;
  tokenSet(response: oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers, now: number): TokenSet;
}

class TooLarge extends Error {}

async function readCapped(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_RESPONSE_BYTES) {
    await response.body?.cancel();
    throw new TooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function boundedFetch(breaker: Circuit, timeoutMs: number, now: () => number, send: FetchLike = fetch): oauth.CustomFetch {
  return async (url, options) => {
    const admission = breaker.admit(now());
    if (!admission.admit) throw new AuthServerError('unavailable', `authorization server is failing; not asked for ${Math.ceil(admission.retryAfterMs / 1000)} s`);
    const { probe } = admission;
    const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    try {
      // openid-client sends forms (URLSearchParams) and nothing else to these endpoints.
      const body = typeof options.body === 'string' || options.body instanceof URLSearchParams ? options.body : undefined;
      const response = await send(url, { method: options.method, headers: options.headers, body, redirect: 'manual', signal });
      const text = await readCapped(response);
      breaker.record(response.status >= 500, now(), probe);
      return new Response([101, 204, 205, 304].includes(response.status) ? null : text, { status: response.status, headers: response.headers });
    } catch (error) {
      // A URL the egress policy refuses was never asked: that says nothing about the server's health.
      const refusal = egressRefusalOf(error);
      if (refusal) {
        breaker.release(probe);
        throw new AuthServerError('refused', `authorization server: ${refusal.message}`);
      }
      breaker.record(true, now(), probe);
      if (error instanceof TooLarge) throw new AuthServerError('invalid_response', `authorization server answer exceeds ${MAX_RESPONSE_BYTES} bytes`);
      if (signal.aborted) throw new AuthServerError('unavailable', `authorization server did not answer within ${timeoutMs} ms`);
      throw new AuthServerError('unavailable', 'authorization server unreachable');
    }
  };
}

/** The error an openid-client failure stands for; never its body or cause (they may echo a token). */
function mapError(what: string, error: unknown): AuthServerError {
  // openid-client wraps what the fetch threw: the bounded fetch's own verdict is in the cause chain.
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof AuthServerError) return new AuthServerError(cause.code, `${what}: ${cause.message}`);
  }
  if (error instanceof AuthServerError) return new AuthServerError(error.code, `${what}: ${error.message}`);
  if (error instanceof oauth.ResponseBodyError) {
    const code = /^[a-z_]{1,64}$/.test(error.error) ? error.error : 'error';
    return new AuthServerError(code === 'invalid_grant' ? 'invalid_grant' : 'refused', `${what}: authorization server refused (${code})`);
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) return new AuthServerError('refused', `${what}: authorization server refused the client (HTTP ${error.status})`);
  if (error instanceof oauth.ClientError) {
    const code = (error as { code?: unknown }).code;
    return new AuthServerError('invalid_response', `${what}: unusable answer from the authorization server${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  return new AuthServerError('invalid_response', `${what}: unusable answer from the authorization server`);
}

/** The server does not know (or no longer accepts) the client: RFC 6749 §5.2 `invalid_client`, as a body or a 401 challenge. */
function isInvalidClient(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof oauth.ResponseBodyError) return cause.error === 'invalid_client';
    if (cause instanceof oauth.WWWAuthenticateChallengeError) return cause.status === 401;
  }
  return false;
}

function clientAuthOf(client: { clientSecret?: string | undefined; authMethod?: string | undefined }): oauth.ClientAuth {
  if (client.clientSecret === undefined) return oauth.None();
  return client.authMethod === 'client_secret_post' ? oauth.ClientSecretPost(client.clientSecret) : oauth.ClientSecretBasic(client.clientSecret);
}

/** The configured client id; the config loader refuses an entry without one unless it registers a client. */
function configuredClientId(auth: UpstreamAuthConfig): string {
  if (auth.clientId === undefined) throw new AuthServerError('refused', 'no clientId is configured');
  return auth.clientId;
}

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const GRANTS: Record<UpstreamAuthConfig['type'], string[]> = { userOAuth: ['authorization_code', 'refresh_token'], clientCredentials: ['client_credentials'], tokenExchange: [TOKEN_EXCHANGE] };

/** Where an `auth` without `issuer` or `tokenUrl` finds its authorization server: the MCP service's own metadata. */
export interface DiscoveryTarget {
  serviceUrl: string;
  /** The policy every URL the upstream names must pass (its own origin is the operator's choice). */
  egress: EgressOptions;
  /**
   * How toolgate identifies itself when no `clientId` is configured: by its Client ID Metadata Document
   * (`clientMetadataUrl`, a user connection at a server that accepts one), else as a client registered at the
   * discovered server (RFC 7591), kept in the store.
   */
  registration?: { deps: ClientRegistrationDeps; service: string; redirectUri?: string; clientMetadataUrl?: string };
}

/** Discovery (configured or found through the service) is asked for when neither `issuer` nor `tokenUrl` is given. */
export const discoversThroughService = (auth: UpstreamAuthConfig): boolean => auth.issuer === undefined && auth.tokenUrl === undefined;

/** The service's own origin goes as configured; any other origin the upstream names goes through the egress policy. */
function discoveryFetch(target: DiscoveryTarget): FetchLike {
  const origin = new URL(target.serviceUrl).origin;
  const pinned = createPinnedFetch(target.egress);
  return (url, init) => (new URL(url).origin === origin ? fetch(url, init) : pinned.fetch(url, init));
}

/** `fetch`: what every request goes through (the pinned egress fetch for a user's own server, whose URLs are the user's). */
export function createAuthServer(auth: UpstreamAuthConfig, options: { now?: () => number; discovery?: DiscoveryTarget; fetch?: FetchLike } = {}): AuthServer {
  const now = options.now ?? Date.now;
  const breaker = createCircuit(BREAKER);
  const discovery = discoversThroughService(auth) ? options.discovery : undefined;
  const fetcher = boundedFetch(breaker, auth.timeoutMs, now, options.fetch ?? (discovery ? discoveryFetch(discovery) : fetch));
  let discoveredResource: string | undefined;
  let pending: Promise<oauth.Configuration> | undefined;
  /** The client registered at the discovered server (RFC 7591) that the current configuration uses. */
  let registeredAs: { issuer: string; clientId: string } | undefined;

  async function registered(target: DiscoveryTarget, found: DiscoveredAuthServer): Promise<RegisteredClient> {
    if (!target.registration) throw new AuthServerError('refused', 'no clientId is configured');
    const { deps, service, redirectUri } = target.registration;
    return registeredClient(deps, { service, issuer: found.issuer, timeoutMs: auth.timeoutMs }, async () => {
      const info = await registerAtServer(
        found,
        {
          client_name: 'toolgate',
          redirect_uris: redirectUri !== undefined ? [redirectUri] : [],
          grant_types: GRANTS[auth.type],
          response_types: auth.type === 'userOAuth' ? ['code'] : [],
          token_endpoint_auth_method: 'client_secret_basic',
          ...(auth.scopes.length > 0 ? { scope: auth.scopes.join(' ') } : {}),
        },
        fetcher,
      );
      return {
        clientId: info.client_id,
        ...(info.client_secret !== undefined ? { clientSecret: info.client_secret } : {}),
        ...(info.token_endpoint_auth_method !== undefined ? { authMethod: info.token_endpoint_auth_method } : {}),
      };
    });
  }

  /** The document's URL as a public client id, where the server accepts one and a user connection is what it is for. */
  function documentClient(target: DiscoveryTarget, found: DiscoveredAuthServer): RegisteredClient | undefined {
    const url = target.registration?.clientMetadataUrl;
    if (url === undefined || auth.type !== 'userOAuth' || !acceptsClientMetadataDocument(found.metadata)) return undefined;
    return { clientId: url };
  }

  async function discovered(target: DiscoveryTarget): Promise<oauth.Configuration> {
    const found = await discoverAuthServer(target.serviceUrl, fetcher, trustedIssuersOf(auth));
    discoveredResource = found.resource;
    // The MCP authorization order: a pre-registered client, then the metadata document, then registration.
    const byDocument = auth.clientId === undefined ? documentClient(target, found) : undefined;
    const client = auth.clientId !== undefined ? { clientId: auth.clientId, clientSecret: auth.clientSecret } : (byDocument ?? (await registered(target, found)));
    registeredAs = auth.clientId === undefined && byDocument === undefined ? { issuer: found.issuer, clientId: client.clientId } : undefined;
    const config = new oauth.Configuration(found.metadata as oauth.ServerMetadata, client.clientId, undefined, clientAuthOf(client));
    // Plain http only where the operator chose it for the service itself.
    if (target.serviceUrl.startsWith('http:')) oauth.allowInsecureRequests(config);
    return config;
  }

  async function build(): Promise<oauth.Configuration> {
    const insecure = [auth.issuer, auth.tokenUrl, auth.authorizationUrl].some((url) => url?.startsWith('http:'));
    let config: oauth.Configuration;
    if (discovery) {
      config = await discovered(discovery);
    } else if (auth.issuer !== undefined) {
      config = await oauth.discovery(new URL(auth.issuer), configuredClientId(auth), undefined, clientAuthOf(auth), {
        [oauth.customFetch]: fetcher,
        ...(insecure ? { execute: [oauth.allowInsecureRequests] } : {}),
      });
    } else if (auth.tokenUrl !== undefined) {
      const tokenUrl = new URL(auth.tokenUrl);
      config = new oauth.Configuration(
        {
          issuer: tokenUrl.origin,
          token_endpoint: tokenUrl.href,
          ...(auth.authorizationUrl ? { authorization_endpoint: auth.authorizationUrl } : {}),
          ...(auth.revocationUrl ? { revocation_endpoint: auth.revocationUrl } : {}),
        },
        configuredClientId(auth),
        undefined,
        clientAuthOf(auth),
      );
      if (insecure) oauth.allowInsecureRequests(config);
    } else {
      throw new AuthServerError('invalid_response', 'no authorization server: give "issuer" or "tokenUrl", or reach a remote MCP service that publishes its metadata');
    }
    config[oauth.customFetch] = fetcher;
    return config;
  }

  /** The failure a request ends with; what was discovered may have moved, so the next call discovers again (the breaker bounds how often). */
  function settle(what: string, error: unknown): AuthServerError {
    const failure = mapError(what, error);
    if (discovery && failure.code !== 'invalid_grant') pending = undefined;
    return failure;
  }

  const server: AuthServer = {
    discovers: discovery !== undefined,
    get tokenParameters() {
      const resource = auth.resource ?? discoveredResource;
      return { ...(resource !== undefined ? { resource } : {}), ...(auth.audience !== undefined ? { audience: auth.audience } : {}) };
    },
    configuration() {
      // A failed discovery is not kept: the next call tries again (the breaker bounds how often).
      pending ??= build().catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
      return pending;
    },
    async run(what, request) {
      try {
        return await request(await server.configuration());
      } catch (error) {
        // A registered client the server no longer knows is forgotten and registered anew, once per request.
        const stale = registeredAs;
        if (stale && discovery?.registration && isInvalidClient(error)) {
          registeredAs = undefined;
          pending = undefined;
          await forgetRegisteredClient(discovery.registration.deps, { service: discovery.registration.service, issuer: stale.issuer }, stale.clientId);
          try {
            return await request(await server.configuration());
          } catch (again) {
            throw settle(what, again);
          }
        }
        throw settle(what, error);
      }
    },
    tokenSet(response, at) {
      if (typeof response.access_token !== 'string' || response.access_token.length === 0 || response.access_token.length > 16384) {
        throw new AuthServerError('invalid_response', 'authorization server answered without a usable access_token');
      }
      const expiresIn = response.expiresIn();
      return {
        accessToken: response.access_token,
        ...(typeof response.refresh_token === 'string' && response.refresh_token.length > 0 ? { refreshToken: response.refresh_token } : {}),
        ...(expiresIn !== undefined ? { expiresAt: at + expiresIn * 1000 } : {}),
        scopes: typeof response.scope === 'string' ? response.scope.split(' ').filter(Boolean) : auth.scopes,
      };
    },
  };
  return server;
}
