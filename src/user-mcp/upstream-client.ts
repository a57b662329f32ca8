// The small wrapper around the SDK Client for one user-level MCP server: connect over streamable
// HTTP (falling back to SSE for older servers), through the pinned egress fetch, with the
// registration's headers and X-Toolgate-Depth on every request. The general upstream pool lives
// in src/mcp/; user servers differ enough (untrusted URLs, per-user lifetime) to keep this apart.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '../egress/pinned-fetch.js';
import type { UserMcpRegistration } from './registrations.js';

export const DEPTH_HEADER = 'x-toolgate-depth';

// The depth of the call being made, read by the fetch wrapper: the SDK offers no per-request
// headers, and the tools/call POST runs inside the handler's async context.
const callDepth = new AsyncLocalStorage<number>();

export function withCallDepth<T>(depth: number, run: () => Promise<T>): Promise<T> {
  return callDepth.run(depth, run);
}

export interface UserMcpConnection {
  readonly client: Client;
  readonly transport: 'streamable-http' | 'sse';
  /** The upstream's tools (paginated listing), cached until the server says its list changed. */
  listTools(options: { signal?: AbortSignal; timeoutMs: number }): Promise<McpTool[]>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** The pinned egress fetch (src/egress/pinned-fetch.ts). */
  fetch: FetchLike;
  timeoutMs: number;
  clientName?: string;
  /** Called when the connection drops, so the cache can forget it. */
  onClose?: () => void;
}

function headerFetch(base: FetchLike, registration: UserMcpRegistration): FetchLike {
  return (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(registration.headers)) headers.set(name, value);
    // Traffic outside a call (initialize, tools/list) counts as one hop.
    headers.set(DEPTH_HEADER, String(callDepth.getStore() ?? 1));
    return base(url, { ...init, headers });
  };
}

async function connectWith(transport: Transport, options: ConnectOptions): Promise<Client> {
  const client = new Client({ name: options.clientName ?? 'toolgate-user-mcp', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: options.timeoutMs });
  return client;
}

export async function connectUserMcp(registration: UserMcpRegistration, options: ConnectOptions): Promise<UserMcpConnection> {
  const url = new URL(registration.url);
  const fetch = headerFetch(options.fetch, registration);
  let client: Client;
  let kind: 'streamable-http' | 'sse' = registration.transport;
  if (registration.transport === 'sse') {
    client = await connectWith(new SSEClientTransport(url, { fetch }), options);
  } else {
    try {
      client = await connectWith(new StreamableHTTPClientTransport(url, { fetch }), options);
    } catch (streamableError) {
      // Older servers speak only the 2024-11-05 HTTP+SSE transport (the SDK's documented fallback).
      try {
        client = await connectWith(new SSEClientTransport(url, { fetch }), options);
        kind = 'sse';
      } catch {
        throw streamableError;
      }
    }
  }

  let cached: Promise<McpTool[]> | undefined;
  if (client.getServerCapabilities()?.tools?.listChanged) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      cached = undefined;
    });
  }
  client.onclose = () => {
    cached = undefined;
    options.onClose?.();
  };

  async function fetchAllTools(signal: AbortSignal | undefined, timeoutMs: number): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    // Bounded: a server that pages forever cannot hold the listing hostage.
    for (let page = 0; page < 50; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { signal, timeout: timeoutMs });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  return {
    client,
    transport: kind,
    listTools: ({ signal, timeoutMs }) => {
      if (!cached) {
        const pending = fetchAllTools(signal, timeoutMs);
        cached = pending;
        pending.catch(() => {
          if (cached === pending) cached = undefined;
        });
      }
      return cached;
    },
    close: () => client.close(),
  };
}
