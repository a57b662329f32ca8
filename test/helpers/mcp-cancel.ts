import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect, vi } from 'vitest';
import type { TestServerState } from '../fixtures/mcp/test-server.js';

/**
 * Starts `ev_sleep` (the test upstream's tool that waits until cancelled) through `client`, lets the SDK
 * send notifications/cancelled for it once the upstream runs it, and expects the upstream to see it cancelled.
 * The call's own HTTP request stays open: only the notification, a separate POST, can end it.
 */
export async function expectCancelledUpstream(client: Client, upstream: TestServerState): Promise<void> {
  const before = upstream.cancelled.length;
  const cancel = new AbortController();
  const pending = client.callTool({ name: 'ev_sleep', arguments: {} }, undefined, { signal: cancel.signal }).catch((error: unknown) => error);
  await vi.waitFor(() => expect(upstream.calls.at(-1)).toBe('sleep'), { timeout: 5000 });
  cancel.abort('the user pressed stop');
  expect(await pending).toBeDefined();
  await vi.waitFor(() => expect(upstream.cancelled.slice(before)).toEqual(['sleep']), { timeout: 5000 });
}
