// One place that turns an upstream's config (global, local or a user's registration) into an SDK client transport.
import { InMemoryTransport, SSEClientTransport, StreamableHTTPClientTransport, type FetchLike, type Transport } from '@modelcontextprotocol/client';
import type { McpRemoteEntry, McpStdioEntry } from '../../config/types.js';
import type { Logger } from '../../call/types.js';
import { CoalescingStdioTransport } from './stdio-transport.js';
import { createUpstreamFetch } from './upstream-fetch.js';

/** Anything with the SDK server's connect/close (an `McpServer` or a low-level `Server`). */
export interface ConnectableServer {
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** An in-process server (local module): a fresh server per connection, joined by the SDK's in-memory pair. */
export interface InMemoryEntry {
  transport: 'in-memory';
  server: () => ConnectableServer | Promise<ConnectableServer>;
}

export type UpstreamTransportConfig = McpStdioEntry | McpRemoteEntry | InMemoryEntry;

export interface OpenedTransport {
  transport: Transport;
  /** The wire actually used (`sse` also when streamable HTTP fell back to it). */
  readonly kind: UpstreamTransportConfig['transport'];
  /** The stdio child's pid, for status detail. */
  readonly pid?: number;
  /** Extra cleanup beyond `transport.close()` (the in-process server). */
  dispose?: () => Promise<void>;
}

export function isHttpTransport(config: UpstreamTransportConfig): config is McpRemoteEntry {
  return config.transport === 'streamable-http' || config.transport === 'sse';
}

export interface OpenTransportOptions {
  /** Streamable HTTP refused earlier: speak the older HTTP+SSE transport. */
  mode?: 'sse';
  /** The fetch under HTTP transports (the pinned egress fetch for user servers). */
  fetch?: FetchLike;
}

function openStdio(config: McpStdioEntry, log: Logger): OpenedTransport {
  const transport = new CoalescingStdioTransport(config, (line) => log.info({ stderr: line }, 'upstream stderr'));
  return {
    transport,
    kind: 'stdio',
    get pid() {
      return transport.pid;
    },
  };
}

export async function openTransport(config: UpstreamTransportConfig, log: Logger, options: OpenTransportOptions = {}): Promise<OpenedTransport> {
  switch (config.transport) {
    case 'stdio':
      return openStdio(config, log);
    case 'in-memory': {
      const server = await config.server();
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      return { transport: clientSide, kind: 'in-memory', dispose: () => server.close() };
    }
    case 'streamable-http':
    case 'sse': {
      const fetch = createUpstreamFetch({ staticHeaders: config.headers, ...(options.fetch ? { base: options.fetch } : {}) });
      const url = new URL(config.url);
      if (config.transport === 'sse' || options.mode === 'sse') return { transport: new SSEClientTransport(url, { fetch }), kind: 'sse' };
      // Reconnection of the standalone GET stream is ours (the client's backoff), not the SDK's.
      const reconnectionOptions = { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 };
      return { transport: new StreamableHTTPClientTransport(url, { fetch, reconnectionOptions }), kind: 'streamable-http' };
    }
  }
}
