// The `fetch` handed to the SDK's HTTP transports: adds the service's headers and each call's own.
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Headers that must never travel upstream from a call context (the caller's credentials, cookies). */
const NEVER_FORWARDED = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-length']);

type RequestId = string | number;

/**
 * Carries per-call headers (depth, forwarded identity) from `callTool` to the fetch that sends the
 * call. Not AsyncLocalStorage: on Node 20 one use of it slows every promise in the process about
 * threefold. Instead, the SDK's `Protocol.request` calls `transport.send` synchronously, so `run`
 * fills a slot, the wrapped `send` tags the JSON-RPC request id with it, and fetch looks the id up.
 */
export interface CallHeaderChannel {
  run<T>(headers: Readonly<Record<string, string>>, send: () => Promise<T>): Promise<T>;
  attach(transport: Transport): void;
  take(body: unknown): Readonly<Record<string, string>> | undefined;
}

function requestIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

export function createCallHeaderChannel(): CallHeaderChannel {
  let slot: Readonly<Record<string, string>> | undefined;
  const pending = new Map<RequestId, Readonly<Record<string, string>>>();
  return {
    run(headers, send) {
      slot = headers;
      try {
        return send();
      } finally {
        slot = undefined;
      }
    },
    attach(transport) {
      const send = transport.send.bind(transport);
      transport.send = (message, options) => {
        const id = slot === undefined ? undefined : requestIdOf(message);
        if (id === undefined) return send(message, options);
        pending.set(id, slot!);
        // By the time send settles its fetch has been made; never keep an entry past that.
        return send(message, options).finally(() => pending.delete(id));
      };
    },
    take(body) {
      if (pending.size === 0 || typeof body !== 'string') return undefined;
      let id: RequestId | undefined;
      try {
        id = requestIdOf(JSON.parse(body));
      } catch {
        return undefined;
      }
      if (id === undefined) return undefined;
      const headers = pending.get(id);
      pending.delete(id);
      return headers;
    },
  };
}

export interface UpstreamFetchOptions {
  /** The service's own static headers from config (may hold its credentials from env secrets). */
  staticHeaders?: Readonly<Record<string, string>>;
  channel?: CallHeaderChannel;
  base?: FetchLike;
}

export function createUpstreamFetch(options: UpstreamFetchOptions = {}): FetchLike {
  const base: FetchLike = options.base ?? ((url, init) => fetch(url, init));
  const staticHeaders = Object.entries(options.staticHeaders ?? {});
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of staticHeaders) headers.set(name, value);
    for (const [name, value] of Object.entries(options.channel?.take(init?.body) ?? {})) {
      if (!NEVER_FORWARDED.has(name.toLowerCase())) headers.set(name, value);
    }
    return base(url, { ...init, headers });
  };
}
