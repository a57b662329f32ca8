// The `auth` object of a user's own MCP server (docs/security-model.md#user-mcp-servers): the user's own OAuth
// connection (userOAuth) or a client of their own (clientCredentials). Never tokenExchange: it would mint,
// from the user's verified inbound token, a token for any URL the user names. Every URL is the user's, so
// each passes the egress policy here and again on every request (the pinned fetch); the client secret is
// sealed by the vault under the owner and server, so the store never holds it and no other record opens it.
import type { UpstreamAuthConfig } from '../../config/types.js';
import { checkEgress, type EgressOptions } from '../../egress/check-egress.js';
import type { ConnectionTarget } from '../../upstream-auth/connections.js';
import type { Vault } from '../../upstream-auth/vault.js';
import { userServiceKey } from '../../registry/user-names.js';
import { isLoopbackHost } from '../../shared/loopback-host.js';

export type UserAuthType = 'userOAuth' | 'clientCredentials';

/** What the store keeps: the secret only sealed. */
export interface UserMcpAuth {
  type: UserAuthType;
  issuer?: string;
  authorizationUrl?: string;
  tokenUrl?: string;
  revocationUrl?: string;
  clientId: string;
  sealedSecret?: string;
  scopes: string[];
  resource?: string;
  audience?: string;
}

/** What GET answers: never the secret, only whether there is one. */
export interface UserMcpAuthView {
  type: UserAuthType;
  issuer?: string;
  authorizationUrl?: string;
  tokenUrl?: string;
  clientId: string;
  scopes: string[];
  hasClientSecret: boolean;
}

export interface RegistrationAuthDeps {
  egress: EgressOptions;
  /** The live vault; undefined (or not ready) when `credentials.keys` is empty. */
  vault: () => Vault | undefined;
  /** `server.publicUrl` is configured (userOAuth's redirect URI). */
  connectable: () => boolean;
}

const URL_KEYS = ['issuer', 'authorizationUrl', 'tokenUrl', 'revocationUrl'] as const;
const STRING_KEYS = ['clientId', 'clientSecret', 'resource', 'audience'] as const;
const MAX_SCOPES = 32;
const MAX_CHARS = 2048;
const TIMEOUT_MS = 5000;

export const secretContext = (tenant: string, sub: string, serviceId: string): string => `user-mcp-auth\u0000${tenant}\u0000${sub}\u0000${serviceId}`;

type Checked = { ok: true; auth: UserMcpAuth } | { ok: false; code: 'TG_BAD_REQUEST'; message: string } | { ok: false; code: 'TG_EGRESS_DENIED'; message: string; reason: string };

const refuse = (message: string): Checked => ({ ok: false, code: 'TG_BAD_REQUEST', message: `auth: ${message}` });

/** Validates and seals a PUT's `auth` for the owner's server `serviceId`. */
export async function checkRegistrationAuth(input: unknown, owner: { tenant: string; sub: string; serviceId: string }, deps: RegistrationAuthDeps): Promise<Checked> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return refuse('must be an object');
  const given = input as Record<string, unknown>;
  if (given.type === 'tokenExchange') {
    return refuse("tokenExchange is not allowed on a user's own server: it would exchange your verified token for one meant for a URL of your choosing; use userOAuth (your own connection) or clientCredentials");
  }
  if (given.type !== 'userOAuth' && given.type !== 'clientCredentials') return refuse('type must be userOAuth or clientCredentials');
  const known = new Set<string>(['type', 'scopes', ...URL_KEYS, ...STRING_KEYS]);
  const unknown = Object.keys(given).find((key) => !known.has(key));
  if (unknown !== undefined) return refuse(`unknown key ${JSON.stringify(unknown.slice(0, 64))}`);
  for (const key of [...URL_KEYS, ...STRING_KEYS]) {
    const value = given[key];
    if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > MAX_CHARS)) return refuse(`${key} must be a string of 1 to ${MAX_CHARS} characters`);
  }
  const scopes = given.scopes ?? [];
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((scope) => typeof scope === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/.test(scope))) {
    return refuse(`scopes must be at most ${MAX_SCOPES} scope tokens`);
  }
  const text = (key: (typeof URL_KEYS)[number] | (typeof STRING_KEYS)[number]): string | undefined => given[key] as string | undefined;
  if (text('issuer') === undefined && text('tokenUrl') === undefined) return refuse('give "issuer" (discovery) or "tokenUrl"');
  if (text('clientId') === undefined) return refuse('give "clientId" (your client at that authorization server)');
  if (given.type === 'userOAuth') {
    if (text('issuer') === undefined && text('authorizationUrl') === undefined) return refuse('userOAuth needs "issuer" or "authorizationUrl"');
    if (!deps.connectable()) return refuse('userOAuth needs server.publicUrl, which this gateway does not configure');
  }
  const vault = deps.vault();
  const secret = text('clientSecret');
  if ((given.type === 'userOAuth' || secret !== undefined) && !vault?.ready) return refuse('credentials are kept encrypted and this gateway configures no credentials.keys');
  const urls: Partial<Record<(typeof URL_KEYS)[number], string>> = {};
  for (const key of URL_KEYS) {
    const value = text(key);
    if (value === undefined) continue;
    // Plain http only where the egress policy lets it through to a loopback address the operator allowed.
    const verdict = await checkEgress(value, deps.egress);
    if (!verdict.ok) return { ...verdict, message: `auth.${key}: ${verdict.message}` };
    if (verdict.url.protocol !== 'https:' && !isLoopbackHost(verdict.url.hostname)) return refuse(`${key} must be https`);
    // As given: an issuer must equal what its metadata names.
    urls[key] = value;
  }
  const { tenant, sub, serviceId } = owner;
  return {
    ok: true,
    auth: {
      type: given.type,
      ...urls,
      clientId: text('clientId') as string,
      ...(secret !== undefined && vault ? { sealedSecret: vault.seal(secret, secretContext(tenant, sub, serviceId)) } : {}),
      scopes: scopes as string[],
      ...(text('resource') !== undefined ? { resource: text('resource') as string } : {}),
      ...(text('audience') !== undefined ? { audience: text('audience') as string } : {}),
    },
  };
}

export function authView(auth: UserMcpAuth): UserMcpAuthView {
  return {
    type: auth.type,
    ...(auth.issuer !== undefined ? { issuer: auth.issuer } : {}),
    ...(auth.authorizationUrl !== undefined ? { authorizationUrl: auth.authorizationUrl } : {}),
    ...(auth.tokenUrl !== undefined ? { tokenUrl: auth.tokenUrl } : {}),
    clientId: auth.clientId,
    scopes: auth.scopes,
    hasClientSecret: auth.sealedSecret !== undefined,
  };
}

/** The upstream-auth config of a stored `auth`, its secret opened for the owner's server only. */
export function authConfigOf(auth: UserMcpAuth, owner: { tenant: string; sub: string; serviceId: string }, vault: Vault | undefined): UpstreamAuthConfig {
  const { sealedSecret, ...rest } = auth;
  const clientSecret = sealedSecret !== undefined && vault ? vault.open(sealedSecret, secretContext(owner.tenant, owner.sub, owner.serviceId)) : undefined;
  return { ...rest, ...(clientSecret !== undefined ? { clientSecret } : {}), timeoutMs: TIMEOUT_MS };
}

/**
 * The connection target of a user's registered server with `auth`, named as the user's service key
 * (`user_<userKey>_service_<serviceId>`); undefined without `auth`.
 */
export function userServerTarget(owner: { tenant: string; user: string }, registration: { serviceId: string; auth?: UserMcpAuth }, vault: Vault | undefined): ConnectionTarget | undefined {
  if (!registration.auth) return undefined;
  const ref = { tenant: owner.tenant, sub: owner.user, serviceId: registration.serviceId };
  return { service: userServiceKey(owner.user, registration.serviceId), auth: authConfigOf(registration.auth, ref, vault), userServer: ref };
}
