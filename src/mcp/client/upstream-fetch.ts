// The `fetch` handed to the SDK's HTTP transports: the service's static headers and each call's own.
import { randomBytes } from 'node:crypto';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { ServiceCredentials } from '../../call/upstream-credential.js';

/** Headers that must never travel upstream from a call context (the caller's credentials, cookies). */
const NEVER_FORWARDED = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-length']);

export const DEPTH_HEADER = 'x-toolgate-depth';

/**
 * A call's upstream credential (docs/security-model.md#upstream-identity) rides as a handle, never as the
 * token: the handle names an entry of this process' table, which the fetch turns into the Authorization
 * header of that call's request. The token so never sits in a JSON-RPC message, a log line or an error.
 */
const CREDENTIAL_HANDLE = 'x-toolgate-credential';
const heldCredentials = new Map<string, string>();

/** Holds an Authorization value for one call: the header to send with it, and the release for when it ends. */
export function holdCredential(authorization: string): { headers: Record<string, string>; release: () => void } {
  const handle = randomBytes(16).toString('base64url');
  heldCredentials.set(handle, authorization);
  return { headers: { [CREDENTIAL_HANDLE]: handle }, release: () => void heldCredentials.delete(handle) };
}

/**
 * The `_meta` key that carries a call's headers (depth, forwarded identity) inside its own `tools/call`
 * message, from `callTool` to the fetch that posts it. The SDK's request options have no per-request
 * headers; riding in the message needs no shared state between concurrent calls (no AsyncLocalStorage,
 * no patched transport). The fetch takes the key out again, so the upstream never sees it in the body.
 */
export const CALL_HEADERS_META = 'io.toolgate/headers';

/** The `_meta` of a `tools/call` whose HTTP request must carry `headers`. */
export function callHeadersMeta(headers: Readonly<Record<string, string>>): Record<string, Record<string, string>> {
  return { [CALL_HEADERS_META]: { ...headers } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A POST body without its call headers, and those headers; the body untouched when it carries none. */
export function takeCallHeaders(body: RequestInit['body']): { body: RequestInit['body']; headers?: Record<string, string> } {
  // Cheap test first: only a tools/call made by callTool holds the key.
  if (typeof body !== 'string' || !body.includes(CALL_HEADERS_META)) return { body };
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return { body };
  }
  const meta = isRecord(message) && isRecord(message.params) ? message.params._meta : undefined;
  if (!isRecord(message) || !isRecord(message.params) || !isRecord(meta) || !isRecord(meta[CALL_HEADERS_META])) return { body };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(meta[CALL_HEADERS_META])) if (typeof value === 'string') headers[name] = value;
  const { [CALL_HEADERS_META]: _taken, ...rest } = meta;
  const { _meta: _old, ...params } = message.params;
  const stripped = { ...message, params: Object.keys(rest).length > 0 ? { ...params, _meta: rest } : params };
  return { body: JSON.stringify(stripped), headers };
}

export interface UpstreamFetchOptions {
  /** The service's own headers (from config, or a user's registration); may hold its credentials. */
  staticHeaders?: Readonly<Record<string, string>>;
  /** The fetch underneath (the pinned egress fetch for user servers); default: global fetch. */
  base?: FetchLike;
}

export function createUpstreamFetch(options: UpstreamFetchOptions = {}): FetchLike {
  const base: FetchLike = options.base ?? ((url, init) => fetch(url, init));
  const staticHeaders = Object.entries(options.staticHeaders ?? {});
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of staticHeaders) headers.set(name, value);
    const taken = takeCallHeaders(init?.body);
    // Traffic outside a call (initialize, tools/list, the GET stream) counts as one hop.
    headers.set(DEPTH_HEADER, '1');
    for (const [name, value] of Object.entries(taken.headers ?? {})) {
      const lower = name.toLowerCase();
      if (lower === CREDENTIAL_HANDLE) {
        const authorization = heldCredentials.get(value);
        if (authorization !== undefined) headers.set('authorization', authorization);
      } else if (!NEVER_FORWARDED.has(lower)) headers.set(name, value);
    }
    return base(url, { ...init, headers, body: taken.body });
  };
}

/**
 * The fetch under a service with `auth`: requests outside a call (initialize, listing, the GET stream)
 * carry the service's own credential (for a user's own server, its owner's); a call's request already
 * carries the caller's, from its handle.
 */
export function sessionCredentialFetch(credentials: Pick<ServiceCredentials, 'forSession'>, base: FetchLike = (url, init) => fetch(url, init)): FetchLike {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    if (!headers.has('authorization')) {
      const credential = await credentials.forSession();
      if (credential) headers.set('authorization', credential.authorization);
    }
    return base(url, { ...init, headers });
  };
}
