// Which MCP protocol era toolgate speaks with an upstream (docs/mcp.md#upstream-eras): the SDK probes
// `server/discover` and falls back to `initialize` as the 2026-07-28 specification says; this module only
// chooses how it may probe and names the outcome.
import type { Client, ProtocolEra, VersionNegotiationOptions } from '@modelcontextprotocol/client';
import type { OpenedTransport } from './upstream-transport.js';

/** `modern`: 2026-07-28 (`server/discover`, stateless); `legacy`: 2025-11-25 and older (`initialize`, sessions). */
export type UpstreamEra = ProtocolEra;

/** Every value the `era` metric label and the status detail can take: a closed set. */
export const UPSTREAM_ERAS: readonly UpstreamEra[] = ['modern', 'legacy'];

/**
 * Rounds of `input_required` one call may go through with a modern upstream: the same bound as the
 * requests a legacy upstream may send back during one call (MAX_RELAYS_PER_CALL on toolgate's own endpoint).
 */
export const MAX_INPUT_ROUNDS = 8;

/**
 * A stdio server that ignores an unknown request before `initialize` is legacy; waiting the whole connect
 * timeout for its silence would only delay start-up.
 */
const STDIO_PROBE_TIMEOUT_MS = 5_000;

/**
 * How the SDK client negotiates with an upstream. HTTP+SSE (the 2024 transport) has no modern era, and an
 * upstream already known to be legacy (its probe failed) is not probed again; everything else probes, and a
 * probe answered with anything but modern evidence falls back to `initialize` (`auto`).
 */
export function negotiationFor(kind: OpenedTransport['kind'], known: UpstreamEra | undefined, timeoutMs: number): VersionNegotiationOptions {
  if (kind === 'sse' || known === 'legacy') return { mode: 'legacy' };
  return { mode: 'auto', probe: { timeoutMs: kind === 'stdio' ? Math.min(STDIO_PROBE_TIMEOUT_MS, timeoutMs) : timeoutMs } };
}

/** The era a connected client negotiated (`legacy` until the SDK says otherwise). */
export function eraOf(client: Pick<Client, 'getProtocolEra'>): UpstreamEra {
  return client.getProtocolEra() ?? 'legacy';
}
