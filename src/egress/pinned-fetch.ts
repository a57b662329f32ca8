// Connection-time enforcement of the egress policy (DNS-rebinding defence). The registration-time
// check is not enough: the hostname may resolve differently a second later. This fetch runs the
// check again for every request and dials the *checked* address itself (no second lookup), so
// nothing can swap a private IP in between. It never follows redirects itself: a 3xx comes back to
// the caller (the MCP SDK follows same-origin ones), and a followed URL is checked like any other.
//
// Built on node:http rather than an undici connector, so the pin does not depend on which undici
// major is installed (undici 8 does not even load on Node 20).
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { checkEgress, EGRESS_REFUSED, type EgressOptions } from './check-egress.js';

/**
 * A request refused by the egress policy (the `cause` of the TypeError fetch throws). Its message is the one
 * wording a caller may hear, wherever an error message ends up; `reason` is for the log and the audit.
 */
export class EgressDeniedError extends Error {
  readonly code = 'TG_EGRESS_DENIED';
  constructor(readonly reason: string) {
    super(EGRESS_REFUSED);
    this.name = 'EgressDeniedError';
  }
}

/** The egress refusal behind an error (fetch's TypeError, or a library error wrapping it), if there is one. */
export function egressRefusalOf(error: unknown): EgressDeniedError | undefined {
  let current: unknown = error;
  // A few levels: fetch wraps it once, a transport may wrap that again.
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    if (current instanceof EgressDeniedError) return current;
    current = current.cause;
  }
  return undefined;
}

/**
 * A request that could not be built (a header value HTTP cannot carry, a malformed URL): nothing was sent,
 * so it says nothing about the upstream (the `cause` of the TypeError fetch throws).
 */
export class RequestNotSentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestNotSentError';
  }
}

const notSent = (error: unknown): TypeError => new TypeError('fetch failed', { cause: new RequestNotSentError((error as Error).message) });

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface PinnedFetch {
  fetch: FetchLike;
  /** Destroys pooled keep-alive sockets. */
  close(): void;
}

export interface PinnedFetchOptions extends EgressOptions {
  /** Keep-alive sockets per origin (default 16). */
  maxSockets?: number;
}

const NO_BODY_STATUS = new Set([101, 204, 205, 304]);

function responseHeaders(rawHeaders: string[]): Headers {
  const headers = new Headers();
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) headers.append(rawHeaders[index], rawHeaders[index + 1]);
  return headers;
}

export function createPinnedFetch(options: PinnedFetchOptions): PinnedFetch {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 16 };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

  const pinnedFetch: FetchLike = async (input, init) => {
    let request: Request;
    try {
      request = new Request(input, { ...init, redirect: 'manual' });
    } catch (error) {
      throw notSent(error);
    }
    const verdict = await checkEgress(request.url, options);
    if (!verdict.ok) throw new TypeError('fetch failed', { cause: new EgressDeniedError(verdict.reason) });
    const { url, addresses } = verdict;
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = { host: url.host };
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if (body) headers['content-length'] = String(body.length);
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const secure = url.protocol === 'https:';

    return new Promise<Response>((resolve, reject) => {
      let outgoing: http.ClientRequest;
      try {
        outgoing = (secure ? https : http).request(
          {
            agent: agents[url.protocol as 'http:' | 'https:'],
            host: addresses[0], // the checked address: no second DNS lookup happens
            port: url.port || (secure ? 443 : 80),
            path: `${url.pathname}${url.search}`,
            method: request.method,
            headers,
            signal: request.signal,
            // TLS still verifies (and sends SNI for) the hostname the user registered.
            ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
          },
          (incoming) => {
            const status = incoming.statusCode ?? 502;
            const hasBody = request.method !== 'HEAD' && !NO_BODY_STATUS.has(status);
            if (!hasBody) incoming.resume();
            resolve(
              new Response(hasBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : null, {
                status,
                statusText: incoming.statusMessage,
                headers: responseHeaders(incoming.rawHeaders),
              }),
            );
          },
        );
      } catch (error) {
        // node:http refuses a header it cannot send (ERR_INVALID_CHAR, …) before any byte leaves.
        reject(notSent(error));
        return;
      }
      outgoing.on('error', (error) => reject(request.signal.aborted ? request.signal.reason : new TypeError('fetch failed', { cause: error })));
      outgoing.end(body);
    });
  };

  return {
    fetch: pinnedFetch,
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
