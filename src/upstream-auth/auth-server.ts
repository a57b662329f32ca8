// An upstream's authorization server, spoken to with openid-client (docs/configuration.md#upstream-identity):
// discovery or explicit endpoints, and every request bounded — a deadline, a cap on the answer's size, and a
// breaker per server — so a slow, dead or hostile token endpoint costs a call a bounded wait, never the gateway.
import * as oauth from 'openid-client';
import type { UpstreamAuthConfig } from '../config/types.js';
import { createBreaker, type Breaker } from './breaker.js';

/** Token endpoint answers are small JSON objects; anything larger is refused unread. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const BREAKER = { failures: 5, coolDownMs: 30_000 };

export type AuthServerErrorCode = 'unavailable' | 'invalid_grant' | 'refused' | 'invalid_response';

/** A failed exchange with an authorization server. The message never holds a token or the server's body. */
export class AuthServerError extends Error {
  constructor(
    readonly code: AuthServerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AuthServerError';
  }
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** ms since epoch; undefined when the server did not say. */
  expiresAt?: number;
  scopes: string[];
}

export interface AuthServer {
  configuration(): Promise<oauth.Configuration>;
  /** The extra parameters of every token request (`resource`, `audience`). */
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

function boundedFetch(breaker: Breaker, timeoutMs: number, now: () => number): oauth.CustomFetch {
  return async (url, options) => {
    const wait = breaker.blockedForMs(now());
    if (wait > 0) throw new AuthServerError('unavailable', `authorization server is failing; not asked for ${Math.ceil(wait / 1000)} s`);
    const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    try {
      // openid-client sends forms (URLSearchParams) and nothing else to these endpoints.
      const body = typeof options.body === 'string' || options.body instanceof URLSearchParams ? options.body : undefined;
      const response = await fetch(url, { method: options.method, headers: options.headers, body, redirect: 'manual', signal });
      const text = await readCapped(response);
      breaker.record(response.status < 500, now());
      return new Response([101, 204, 205, 304].includes(response.status) ? null : text, { status: response.status, headers: response.headers });
    } catch (error) {
      breaker.record(false, now());
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

function clientAuthOf(auth: UpstreamAuthConfig): oauth.ClientAuth {
  return auth.clientSecret === undefined ? oauth.None() : oauth.ClientSecretBasic(auth.clientSecret);
}

export function createAuthServer(auth: UpstreamAuthConfig, options: { now?: () => number } = {}): AuthServer {
  const now = options.now ?? Date.now;
  const breaker = createBreaker(BREAKER);
  const fetcher = boundedFetch(breaker, auth.timeoutMs, now);
  const tokenParameters: Record<string, string> = {
    ...(auth.resource !== undefined ? { resource: auth.resource } : {}),
    ...(auth.audience !== undefined ? { audience: auth.audience } : {}),
  };
  let pending: Promise<oauth.Configuration> | undefined;

  async function build(): Promise<oauth.Configuration> {
    const insecure = [auth.issuer, auth.tokenUrl, auth.authorizationUrl].some((url) => url?.startsWith('http:'));
    let config: oauth.Configuration;
    if (auth.issuer !== undefined) {
      config = await oauth.discovery(new URL(auth.issuer), auth.clientId, undefined, clientAuthOf(auth), {
        [oauth.customFetch]: fetcher,
        ...(insecure ? { execute: [oauth.allowInsecureRequests] } : {}),
      });
    } else {
      const tokenUrl = new URL(auth.tokenUrl as string);
      config = new oauth.Configuration(
        {
          issuer: tokenUrl.origin,
          token_endpoint: tokenUrl.href,
          ...(auth.authorizationUrl ? { authorization_endpoint: auth.authorizationUrl } : {}),
          ...(auth.revocationUrl ? { revocation_endpoint: auth.revocationUrl } : {}),
        },
        auth.clientId,
        undefined,
        clientAuthOf(auth),
      );
      if (insecure) oauth.allowInsecureRequests(config);
    }
    config[oauth.customFetch] = fetcher;
    return config;
  }

  const server: AuthServer = {
    tokenParameters,
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
        throw mapError(what, error);
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
