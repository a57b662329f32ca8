// One place that turns an upstream's config into an SDK client transport.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpRemoteEntry, McpStdioEntry } from '../config/types.js';
import type { Logger } from '../types.js';
import { CoalescingStdioClientTransport } from './coalescing-stdio.js';
import { createCallHeaderChannel, createUpstreamFetch, type CallHeaderChannel } from './upstream-fetch.js';

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
  /** HTTP only: how per-call headers reach the request that carries the call. */
  readonly channel?: CallHeaderChannel;
  /** The stdio child's pid, for status detail. */
  readonly pid?: number;
  /** Extra cleanup beyond `transport.close()` (the in-process server). */
  dispose?: () => Promise<void>;
}

export function isHttpTransport(config: UpstreamTransportConfig): config is McpRemoteEntry {
  return config.transport === 'streamable-http' || config.transport === 'sse';
}

function openStdio(config: McpStdioEntry, log: Logger): OpenedTransport {
  // The SDK merges a safe default environment (PATH, HOME, …) with the configured env; toolgate's own secrets stay out.
  const transport = new CoalescingStdioClientTransport({ command: config.command, args: config.args, env: config.env, cwd: config.cwd, stderr: 'pipe' });
  const stderr = transport.stderr;
  if (stderr instanceof Readable) createInterface({ input: stderr }).on('line', (line) => log.info({ stderr: line }, 'upstream stderr'));
  return {
    transport,
    get pid() {
      return transport.pid ?? undefined;
    },
  };
}

export async function openTransport(config: UpstreamTransportConfig, log: Logger, mode?: 'sse'): Promise<OpenedTransport> {
  switch (config.transport) {
    case 'stdio':
      return openStdio(config, log);
    case 'in-memory': {
      const server = await config.server();
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      return { transport: clientSide, dispose: () => server.close() };
    }
    case 'streamable-http':
    case 'sse': {
      const channel = createCallHeaderChannel();
      const fetch = createUpstreamFetch({ staticHeaders: config.headers, channel });
      const url = new URL(config.url);
      const transport =
        config.transport === 'sse' || mode === 'sse'
          ? new SSEClientTransport(url, { fetch })
          : // Reconnection of the standalone GET stream is ours (the client's backoff), not the SDK's.
            new StreamableHTTPClientTransport(url, { fetch, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
      channel.attach(transport);
      return { transport, channel };
    }
  }
}
