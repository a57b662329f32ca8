import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserMcpRegistrations } from '../../../src/mcp/user/registrations.js';
import { createUserMcpProvider } from '../../../src/mcp/user/user-mcp-provider.js';
import type { Principal } from '../../../src/call/principal.js';
import { installLoopbackGuard, type LoopbackGuard } from '../../helpers/loopback-guard.js';
import { createTestStore } from '../../helpers/memory-store.js';
import { startSseOnlyUpstream, textTool, type TestUpstream } from '../../helpers/mcp-upstream.js';

const log = pino({ level: 'silent' });
const egress = { allow: ['127.0.0.1'] };
let guard: LoopbackGuard;
let upstream: TestUpstream;

beforeAll(async () => {
  guard = installLoopbackGuard();
  upstream = await startSseOnlyUpstream([textTool('echo', (args) => `sse:${String(args.text)}`)]);
});

afterAll(async () => {
  await upstream?.close();
  guard.uninstall();
  expect(guard.violations).toEqual([]);
});

describe('user-level MCP over SSE', () => {
  it.each(['sse', 'streamable-http'] as const)('reaches an SSE-only server registered as %s (streamable falls back to SSE)', async (transport) => {
    const registrations = createUserMcpRegistrations({ store: createTestStore(), egress, maxServers: () => 1 });
    await registrations.put('acme', 'eve', 'old', { url: upstream.url, transport, headers: { 'X-Key': 'k' } });
    const provider = createUserMcpProvider({ registrations, egress });
    const eve: Principal = { tenant: 'acme', user: 'eve', roles: [], claims: {} };
    try {
      const [echo] = await provider.toolsFor(eve, log);
      expect(echo?.name).toBe('user_eve_tool_echo');
      const output = await echo.handler({ text: 'hi' }, { principal: eve, callId: 'c', requestId: 'r', signal: new AbortController().signal, log, depth: 0 });
      expect(output).toEqual({ output: 'sse:hi', trace: null });
      const posts = upstream.requests.filter((headers) => headers['content-type']?.includes('json'));
      expect(posts.at(-1)).toMatchObject({ 'x-key': 'k', 'x-toolgate-depth': '1' });
    } finally {
      await provider.close();
    }
  });
});
