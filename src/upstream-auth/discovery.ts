// RFC 9728 discovery of an MCP upstream's authorization server (docs/security-model.md#upstream-identity),
// through the MCP SDK's client helpers: the upstream's 401 names its protected-resource metadata (or the
// well-known URL of its origin holds it); the metadata names the authorization server, whose RFC 8414 / OIDC
// metadata gives the endpoints. The upstream chooses every URL after the first, so the caller hands a fetch
// that sends other origins through the egress policy; the metadata must describe this very service.
import {
  checkResourceAllowed,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  registerClient,
  type AuthorizationServerMetadata,
  type OAuthClientInformationFull,
  type OAuthClientMetadata,
} from '@modelcontextprotocol/client';
import type { CustomFetch } from 'openid-client';
import type { FetchLike } from '../egress/pinned-fetch.js';
import { AuthServerError } from './auth-server-error.js';

export interface DiscoveredAuthServer {
  /** The authorization server's URL, as the resource metadata names it. */
  issuer: string;
  /** The protected resource's identifier, sent as the RFC 8707 `resource` unless the config names one. */
  resource: string;
  metadata: AuthorizationServerMetadata;
}

const sameUrl = (a: string, b: string): boolean => new URL(a).href === new URL(b).href;

/** Asks the service without a token; a 401 may name its metadata (RFC 9728 §5.1). Any other answer is no hint. */
async function resourceMetadataHint(serviceUrl: string, fetchFn: FetchLike): Promise<URL | undefined> {
  const probe = await fetchFn(serviceUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
  });
  await probe.body?.cancel();
  return probe.status === 401 ? extractWWWAuthenticateParams(probe).resourceMetadataUrl : undefined;
}

/** The bounded fetch (openid-client's shape) as the SDK's helpers call it. */
function sdkFetch(send: CustomFetch): FetchLike {
  return (url, init) =>
    send(String(url), {
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: typeof init?.body === 'string' ? init.body : undefined,
      redirect: 'manual',
      ...(init?.signal ? { signal: init.signal } : {}),
    });
}

/**
 * `send` is bounded in time and size, and refuses by the egress policy what the caller says it must.
 * `trusted`: the only authorization servers the service may name (matched exactly), checked before that
 * server is asked anything; undefined: any.
 */
export async function discoverAuthServer(serviceUrl: string, send: CustomFetch, trusted?: readonly string[]): Promise<DiscoveredAuthServer> {
  const fetchFn = sdkFetch(send);
  const hint = await resourceMetadataHint(serviceUrl, fetchFn);
  const resource = await discoverOAuthProtectedResourceMetadata(serviceUrl, hint ? { resourceMetadataUrl: hint } : {}, fetchFn);
  // RFC 9728 §3.3: metadata that describes another resource is not this service's, whoever serves it.
  if (!checkResourceAllowed({ requestedResource: serviceUrl, configuredResource: resource.resource })) {
    throw new AuthServerError('invalid_response', 'the protected resource metadata describes another resource');
  }
  const issuer = resource.authorization_servers?.[0];
  if (issuer === undefined) throw new AuthServerError('invalid_response', 'the protected resource metadata names no authorization server');
  if (trusted !== undefined && !trusted.some((url) => sameUrl(url, issuer))) {
    throw new AuthServerError('refused', 'the service names an authorization server that is not in trustedIssuers');
  }
  const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
  if (!metadata) throw new AuthServerError('invalid_response', 'the authorization server publishes no metadata');
  // RFC 8414 §3.3: the metadata's issuer is the URL it was fetched for, or it is not that server's.
  if (!sameUrl(metadata.issuer, issuer)) throw new AuthServerError('invalid_response', 'the authorization server metadata names another issuer');
  return { issuer, resource: resource.resource, metadata };
}

/** RFC 7591 dynamic client registration at a discovered server that offers it. */
export async function registerAtServer(found: DiscoveredAuthServer, clientMetadata: OAuthClientMetadata, send: CustomFetch): Promise<OAuthClientInformationFull> {
  if (found.metadata.registration_endpoint === undefined) {
    throw new AuthServerError('refused', 'no clientId is configured and the authorization server offers no client registration');
  }
  return registerClient(found.issuer, { metadata: found.metadata, clientMetadata, fetchFn: sdkFetch(send) });
}
