// subscriptions/listen in the 2026-07-28 era (docs/mcp.md#two-protocol-eras): each open stream is watched by the
// session hub like a legacy session's GET stream — its caller's pool is rechecked when something changed on
// any replica — and a change is published on the stream's own event bus, so it reaches this caller only.
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { McpEndpointDeps } from './deps.js';
import type { ServerEventBus } from '@modelcontextprotocol/server';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { errors } from '../../errors.js';
import { requestMode } from '../../http/call-options.js';
import type { SessionHub } from './session-hub.js';
import type { SseStream } from './sse-stream.js';

export interface ListenStreams {
  /** Registers one listen stream; `end` closes it (a shutdown); the returned `close` when it ended. */
  open(request: FastifyRequest, toolset: string | undefined, bus: ServerEventBus, end: () => void): Promise<{ close(): void }>;
}

export function createListenStreams(deps: Pick<McpEndpointDeps, 'gateway'>, hub: SessionHub): ListenStreams {
  // Open streams of this replica per caller and per tenant, bounded as sessions are (mcpServer.maxPerPrincipal, maxPerTenant).
  const open = new Map<string, number>();
  const count = (key: string, by: number): void => {
    const next = (open.get(key) ?? 0) + by;
    if (next > 0) open.set(key, next);
    else open.delete(key);
  };
  return {
    async open(request, toolset, bus, end) {
      const { principal } = request;
      const settings = deps.gateway.config.mcpServer;
      const tenantKey = JSON.stringify([principal.tenant]);
      const callerKey = JSON.stringify([principal.tenant, principal.user]);
      if ((open.get(callerKey) ?? 0) >= settings.maxPerPrincipal || (open.get(tenantKey) ?? 0) >= settings.maxPerTenant) {
        throw new errors.TG_OVERLOADED('too many open MCP subscription streams: close one first');
      }
      const mode = requestMode(request);
      const fingerprint = (await deps.gateway.poolFor(principal, mode, toolset)).fingerprint;
      let closed = false;
      // The hub's view of the stream: what it would write to a legacy GET stream becomes an event on the bus.
      const stream: SseStream = {
        start: () => undefined,
        send(message: JSONRPCMessage) {
          if (!closed && 'method' in message && message.method === 'notifications/tools/list_changed') bus.publish({ kind: 'tools_list_changed' });
          return !closed;
        },
        ping: () => !closed,
        close() {
          if (closed) return;
          closed = true;
          end();
        },
        get closed() {
          return closed;
        },
      };
      const id = `listen:${randomUUID()}`;
      count(callerKey, 1);
      count(tenantKey, 1);
      await hub.attach(id, { principal, mode, toolset, stream, fingerprint });
      return {
        close() {
          closed = true;
          hub.detach(id, stream);
          count(callerKey, -1);
          count(tenantKey, -1);
        },
      };
    },
  };
}
