import { DomainError } from '../errors.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  importSPKI,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JSONWebKeySet,
} from 'jose';
import type { AuthConfig, JwtConfig } from '../config/types.js';
import type { Credential, Principal } from '../call/principal.js';
import { rememberSubjectToken } from './subject-tokens.js';
import { TokenCache } from './token-cache.js';

export class AuthenticationError extends DomainError {
  readonly gatewayCode = 'TG_UNAUTHENTICATED';
  constructor(message: string) {
    super(message);
    this.name = 'AuthenticationError';
  }
}

export interface Authenticator {
  /** Verifies a bearer token (JWT or API key) and returns its principal. Throws AuthenticationError. */
  authenticate(token: string): Promise<Principal>;
  /** The principal of a token verified recently (the token cache), without waiting; undefined otherwise. */
  cached(token: string): Principal | undefined;
  readonly cache: TokenCache;
}

export interface AuthenticatorOptions {
  /** Tests and benchmarks: a JWKS served in-process instead of fetched from jwksUrl. */
  jwks?: JSONWebKeySet;
  now?: () => number;
}

const HMAC_ALGS = ['HS256', 'HS384', 'HS512'];
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function freezePrincipal(tenant: string, user: string, roles: readonly string[], claims: Record<string, unknown>, operator: boolean, credential: Credential): Principal {
  return Object.freeze({ tenant, user, roles: Object.freeze([...roles]), claims: Object.freeze({ ...claims }), ...(operator ? { operator } : {}), credential: Object.freeze(credential) });
}

const JWT_CREDENTIAL: Credential = Object.freeze({ kind: 'jwt' });

function rolesFrom(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((role): role is string => typeof role === 'string');
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  return [];
}

/** Verification key for each algorithm family, so an HS token can never be checked against a public key or vice versa. */
async function createKeyResolver(jwt: JwtConfig, options: AuthenticatorOptions): Promise<{ getKey: JWTVerifyGetKey; algorithms: string[] }> {
  const secret = jwt.secret ? new TextEncoder().encode(jwt.secret) : undefined;
  const asymmetricAlgs = (jwt.algorithms ?? ['RS256', 'ES256']).filter((alg) => !HMAC_ALGS.includes(alg));
  const pemAlg = asymmetricAlgs[0] ?? 'RS256';
  const publicKey = jwt.publicKey ? await importSPKI(jwt.publicKey, pemAlg) : undefined;
  const jwks = options.jwks ? createLocalJWKSet(options.jwks) : jwt.jwksUrl ? createRemoteJWKSet(new URL(jwt.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30000 }) : undefined;

  const algorithms = [
    ...(secret ? (jwt.algorithms ?? ['HS256']).filter((alg) => HMAC_ALGS.includes(alg)) : []),
    ...(publicKey ? [pemAlg] : []),
    ...(jwks ? asymmetricAlgs : []),
  ];
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (HMAC_ALGS.includes(header.alg)) {
      if (!secret) throw new AuthenticationError('token algorithm is not accepted');
      return secret;
    }
    if (publicKey) return publicKey;
    if (jwks) return jwks(header, token);
    throw new AuthenticationError('token algorithm is not accepted');
  };
  return { getKey, algorithms: [...new Set(algorithms)] };
}

/**
 * A token without `exp` would stay valid forever (a leaked one cannot be outlived), so it is refused
 * unless `requireExp` is off. `maxTokenLifetimeSec` bounds how long an issuer may make a token live, counted
 * from `iat`, or from now when `iat` is missing or in the future (a future `iat` must not stretch the bound).
 * Returns the refusal, or undefined. (jose has already checked `exp`/`nbf` against the clock, with
 * `clockToleranceSec`; the lifetime bound takes no tolerance: it compares two times the issuer wrote.)
 */
function lifetimeCheck(payload: JWTPayload, jwt: JwtConfig, nowMs: number): string | undefined {
  const exp = typeof payload.exp === 'number' ? payload.exp : undefined;
  if (exp === undefined) return jwt.requireExp ? 'token has no expiry (exp)' : undefined;
  const nowSec = nowMs / 1000;
  const from = typeof payload.iat === 'number' ? Math.min(payload.iat, nowSec) : nowSec;
  return exp - from > jwt.maxTokenLifetimeSec ? `token lifetime exceeds ${jwt.maxTokenLifetimeSec} s` : undefined;
}

export async function createAuthenticator(config: AuthConfig, options: AuthenticatorOptions = {}): Promise<Authenticator> {
  const now = options.now ?? Date.now;
  const cache = new TokenCache(config.cache.max, config.cache.ttlMs, now);
  const operatorKeys = new Set(config.operators.flatMap((entry) => ('apiKey' in entry ? [entry.apiKey] : [])));
  const operatorSubjects = config.operators.flatMap((entry) => ('sub' in entry ? [entry] : []));
  const apiKeys = config.apiKeys.map((key) => ({ ...key, digest: Buffer.from(key.sha256.toLowerCase(), 'hex'), operator: operatorKeys.has(key.id) }));
  const jwt = config.jwt;
  const keyResolver = jwt ? await createKeyResolver(jwt, options) : undefined;

  function verifyApiKey(token: string): Principal {
    const digest = createHash('sha256').update(token).digest();
    // Compare against every key so timing does not reveal which (or whether an early) entry matched.
    let match: (typeof apiKeys)[number] | undefined;
    for (const key of apiKeys) {
      if (timingSafeEqual(digest, key.digest) && !match) match = key;
    }
    if (!match) throw new AuthenticationError('invalid token');
    const credential: Credential = { kind: 'apiKey', id: match.id, sha256: match.sha256.toLowerCase() };
    return freezePrincipal(match.tenant, match.user, match.roles, { ...(match.claims ?? {}), sub: match.user, tenant: match.tenant }, match.operator, credential);
  }

  async function verifyJwt(token: string): Promise<{ principal: Principal; exp: number | undefined }> {
    if (!jwt || !keyResolver) throw new AuthenticationError('invalid token');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keyResolver.getKey, {
        algorithms: keyResolver.algorithms,
        issuer: jwt.issuer,
        audience: jwt.audience,
        clockTolerance: jwt.clockToleranceSec,
        currentDate: new Date(now()),
      }));
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new AuthenticationError(code === 'ERR_JWT_EXPIRED' ? 'token expired' : 'invalid token');
    }
    const lifetimeProblem = lifetimeCheck(payload, jwt, now());
    if (lifetimeProblem) throw new AuthenticationError(lifetimeProblem);
    const tenant = payload[jwt.tenantClaim];
    if (typeof tenant !== 'string' || tenant.length === 0) throw new AuthenticationError(`token has no string "${jwt.tenantClaim}" claim`);
    if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new AuthenticationError('token has no subject');
    const sub = payload.sub;
    const operator = operatorSubjects.some((entry) => entry.tenant === tenant && entry.sub === sub);
    const principal = freezePrincipal(tenant, sub, rolesFrom(payload[jwt.rolesClaim]), payload as Record<string, unknown>, operator, JWT_CREDENTIAL);
    rememberSubjectToken(principal, token);
    return { principal, exp: typeof payload.exp === 'number' ? payload.exp * 1000 : undefined };
  }

  return {
    cache,
    cached(token: string): Principal | undefined {
      if (token.length === 0 || token.length > 8192) return undefined;
      return cache.get(TokenCache.keyOf(token));
    },
    async authenticate(token: string): Promise<Principal> {
      if (token.length === 0 || token.length > 8192) throw new AuthenticationError('invalid token');
      const key = TokenCache.keyOf(token);
      const cached = cache.get(key);
      if (cached) return cached;
      if (JWT_SHAPE.test(token)) {
        const { principal, exp } = await verifyJwt(token);
        cache.set(key, principal, exp);
        return principal;
      }
      const principal = verifyApiKey(token);
      cache.set(key, principal, undefined);
      return principal;
    },
  };
}
