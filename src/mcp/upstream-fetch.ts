// The `fetch` handed to the SDK's HTTP transports: adds headers per call and keeps no listeners behind.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { linkAbort } from './abort-link.js';

/** Headers that must never travel upstream from a call context (the caller's credentials, cookies). */
const NEVER_FORWARDED = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-length']);

const callHeaders = new AsyncLocalStorage<Readonly<Record<string, string>>>();

/** Runs `fn` so every upstream HTTP request it causes carries `headers` (depth, forwarded identity). */
export function withCallHeaders<T>(headers: Readonly<Record<string, string>>, fn: () => Promise<T>): Promise<T> {
  return callHeaders.run(headers, fn);
}

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

function watchBody(response: Response, done: () => void): Response {
  if (!response.body || NULL_BODY_STATUS.has(response.status)) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          done();
          controller.close();
        } else controller.enqueue(chunk.value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

export interface UpstreamFetchOptions {
  /** The service's own static headers from config (may hold its credentials from env secrets). */
  staticHeaders?: Readonly<Record<string, string>>;
  base?: FetchLike;
}

export function createUpstreamFetch(options: UpstreamFetchOptions = {}): FetchLike {
  const base: FetchLike = options.base ?? ((url, init) => fetch(url, init));
  const staticHeaders = Object.entries(options.staticHeaders ?? {});
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of staticHeaders) headers.set(name, value);
    for (const [name, value] of Object.entries(callHeaders.getStore() ?? {})) {
      if (!NEVER_FORWARDED.has(name.toLowerCase())) headers.set(name, value);
    }
    // The transport's long-lived signal gets one listener in total, not one per request (abort-link.ts);
    // the child is released when the response body ends, so close() still aborts open streams.
    const { signal, unlink } = linkAbort(init?.signal);
    try {
      const response = await base(url, { ...init, headers, ...(signal ? { signal } : {}) });
      return watchBody(response, unlink);
    } catch (error) {
      unlink();
      throw error;
    }
  };
}
