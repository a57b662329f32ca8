import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isToolError } from '../../../src/call/tool-error.js';
import { createUserMcpRegistrations } from '../../../src/mcp/user/registrations.js';
import { createUserMcpProvider, type UserMcpProvider } from '../../../src/mcp/user/user-mcp-provider.js';
import { createClientCache } from '../../../src/mcp/user/client-cache.js';
import type { Principal } from '../../../src/call/principal.js';
import type { Tool, ToolContext } from '../../../src/call/types.js';
import { installLoopbackGuard, type LoopbackGuard } from '../../helpers/loopback-guard.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createTestStore } from '../../helpers/memory-store.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../../helpers/mcp-upstream.js';

const log = pino({ level: 'silent' });
const principal = (tenant: string, user: string): Principal => ({ tenant, user, roles: [], claims: { sub: user } });
const ctxFor = (who: Principal, signal = new AbortController().signal): ToolContext => ({
  principal: who,
  callId: 'c1',
  requestId: 'r1',
  signal,
  log,
  depth: 2,
});

let guard: LoopbackGuard;
let upstreamA: TestUpstream;
let upstreamB: TestUpstream;
let provider: UserMcpProvider;
const store = createTestStore();
// Loopback is refused by default; these tests put exactly 127.0.0.1 on the allowlist.
const egress = { allow: ['127.0.0.1'], resolve: async (host: string) => (host === 'mcp.local.test' ? ['127.0.0.1'] : []) };
const registrations = createUserMcpRegistrations({ store, egress, maxServers: () => 5 });

const alice = principal('acme', 'alice');
const bob = principal('acme', 'bob');
const aliceElsewhere = principal('globex', 'alice');
const oddSub = principal('acme', 'auth0|ü/ser');

beforeAll(async () => {
  guard = installLoopbackGuard();
  upstreamA = await startMcpUpstream([
    textTool('echo', (args) => `A:${String(args.text)}`, { annotations: { readOnlyHint: true } }),
    {
      definition: { name: 'fail', inputSchema: { type: 'object' } },
      call: () => ({ content: [{ type: 'text', text: 'upstream says no' }], isError: true }),
    },
    {
      definition: { name: 'picture', inputSchema: { type: 'object' } },
      call: () => ({ content: [{ type: 'text', text: 'see' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }),
    },
    {
      definition: { name: 'wait', inputSchema: { type: 'object' } },
      call: (_args, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ content: [] }))),
    },
  ]);
  upstreamB = await startMcpUpstream([textTool('echo', (args) => `B:${String(args.text)}`), textTool('only-b', () => 'b')]);
  provider = createUserMcpProvider({ registrations, egress, enabledFor: (tenant) => tenant !== 'disabled', maxClients: 8 });
  await registrations.put('acme', 'alice', 'svc-a', { url: upstreamA.url, headers: { 'X-Api-Key': 'alice-upstream-secret' } });
  await registrations.put('acme', 'bob', 'svc-b', { url: upstreamB.url });
  await registrations.put('globex', 'alice', 'svc-b', { url: upstreamB.url });
  await registrations.put('acme', oddSub.user, 'svc-a', { url: `http://mcp.local.test:${upstreamA.port}/mcp` });
});

afterAll(async () => {
  await provider?.close();
  await upstreamA?.close();
  await upstreamB?.close();
  guard.uninstall();
  expect(guard.violations).toEqual([]);
});

const names = (tools: readonly Tool[]) => tools.map((tool) => tool.name).sort();
const byName = (tools: readonly Tool[], name: string) => {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};

describe('user-level MCP provider', () => {
  it('lists each user only their own servers\' tools, prefixed with their user key', async () => {
    expect(names(await provider.toolsFor(alice, log))).toEqual(['user_alice_tool_echo', 'user_alice_tool_fail', 'user_alice_tool_picture', 'user_alice_tool_wait']);
    expect(names(await provider.toolsFor(bob, log))).toEqual(['user_bob_tool_echo', 'user_bob_tool_only-b']);
    expect(names(await provider.toolsFor(aliceElsewhere, log))).toEqual(['user_alice_tool_echo', 'user_alice_tool_only-b']);
    expect(await provider.toolsFor(principal('acme', 'carol'), log)).toEqual([]);
    expect(await provider.toolsFor(principal('disabled', 'alice'), log)).toEqual([]);
  });

  it('marks tools with source user-mcp, the service key and MCP annotations', async () => {
    const echo = byName(await provider.toolsFor(alice, log), 'user_alice_tool_echo');
    expect(echo).toMatchObject({ source: 'user-mcp', service: 'user_alice_service_svc-a', readOnly: true, destructive: false });
    expect(byName(await provider.toolsFor(alice, log), 'user_alice_tool_fail')).toMatchObject({ readOnly: false, destructive: true });
  });

  it('calls the upstream with the registration headers and depth + 1, never anything of the caller', async () => {
    const echo = byName(await provider.toolsFor(alice, log), 'user_alice_tool_echo');
    const before = upstreamA.requests.length;
    expect(await echo.handler({ text: 'hi' }, ctxFor(alice))).toEqual({ output: 'A:hi', trace: null });
    const seen = upstreamA.requests.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    const call = seen.at(-1)!;
    expect(call['x-api-key']).toBe('alice-upstream-secret');
    expect(call['x-toolgate-depth']).toBe('3');
    expect(call.authorization).toBeUndefined();
  });

  it('keeps the same sub in two tenants apart: same tool name, different upstream', async () => {
    const inAcme = byName(await provider.toolsFor(alice, log), 'user_alice_tool_echo');
    const inGlobex = byName(await provider.toolsFor(aliceElsewhere, log), 'user_alice_tool_echo');
    expect(await inAcme.handler({ text: 'x' }, ctxFor(alice))).toEqual({ output: 'A:x', trace: null });
    expect(await inGlobex.handler({ text: 'x' }, ctxFor(aliceElsewhere))).toEqual({ output: 'B:x', trace: null });
  });

  it('refuses a handler invoked for anyone but its owner with PERMISSION_DENIED', async () => {
    const echo = byName(await provider.toolsFor(alice, log), 'user_alice_tool_echo');
    for (const other of [bob, aliceElsewhere]) {
      const error = await Promise.resolve(echo.handler({ text: 'x' }, ctxFor(other))).catch((failure: unknown) => failure);
      expect(isToolError(error) && error.errorType).toBe('PERMISSION_DENIED');
    }
  });

  it('turns isError into UPSTREAM_ERROR with the upstream text, and keeps rich content in the trace', async () => {
    const tools = await provider.toolsFor(alice, log);
    const error = await Promise.resolve(byName(tools, 'user_alice_tool_fail').handler({}, ctxFor(alice))).catch((failure: unknown) => failure);
    expect(isToolError(error) && [error.errorType, error.message]).toEqual(['UPSTREAM_ERROR', 'upstream says no']);
    const picture = await byName(tools, 'user_alice_tool_picture').handler({}, ctxFor(alice));
    expect(picture).toMatchObject({ output: 'see\n[image image/png 3 bytes]', trace: { content: [{ type: 'text' }, { type: 'image' }] } });
  });

  it('cancels the upstream call through ctx.signal', async () => {
    const wait = byName(await provider.toolsFor(alice, log), 'user_alice_tool_wait');
    const controller = new AbortController();
    const pending = Promise.resolve(wait.handler({}, ctxFor(alice, controller.signal))).catch((failure: unknown) => failure);
    controller.abort(new Error('timed out'));
    const error = await pending;
    // The one error mapping of every MCP upstream: a cancelled call answers TIMEOUT.
    expect(isToolError(error) && error.errorType).toBe('TIMEOUT');
  });

  it('resolves registered hostnames through the pinned egress check; URL-encoded odd subs work', async () => {
    const tools = await provider.toolsFor(oddSub, log);
    expect(names(tools).every((name) => /^user_[0-9a-f]{12}_tool_/.test(name))).toBe(true);
    const echo = tools.find((tool) => tool.name.endsWith('_tool_echo'))!;
    expect(await echo.handler({ text: 'u' }, ctxFor(oddSub))).toEqual({ output: 'A:u', trace: null });
    expect(upstreamA.requests.at(-1)?.host).toBe(`mcp.local.test:${upstreamA.port}`);
  });

  it('hides a server the egress policy refuses at connect time', async () => {
    // Registered while allowed, then the allowlist shrinks: the connect-time check refuses it.
    const strictStore = createTestStore();
    const strictRegs = createUserMcpRegistrations({ store: strictStore, egress, maxServers: () => 5 });
    await strictRegs.put('acme', 'dave', 's', { url: upstreamA.url });
    const strict = createUserMcpProvider({ registrations: strictRegs, egress: { allow: [] } });
    const dialled = guard.dialled.length;
    const lines: string[] = [];
    const captured = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    try {
      expect(await strict.toolsFor(principal('acme', 'dave'), captured)).toEqual([]);
      expect(guard.dialled.length).toBe(dialled);
      // Why is in the log only; every message that could reach a caller carries the one wording.
      const warned = lines.map((line) => JSON.parse(line) as { egressReason?: string; err?: string });
      expect(warned.map((line) => line.egressReason)).toContain('127.0.0.1 is a loopback address');
      expect(warned.every((line) => !line.err?.includes('loopback'))).toBe(true);
    } finally {
      await strict.close();
    }
  });

  it('reconnects after a registration changes and after forget()', async () => {
    await registrations.put('acme', 'bob', 'svc-b', { url: upstreamA.url });
    await provider.forget('acme', 'bob', 'svc-b');
    expect(names(await provider.toolsFor(bob, log))).toContain('user_bob_tool_picture');
    await registrations.delete('acme', 'bob', 'svc-b');
    await provider.forget('acme', 'bob');
    expect(await provider.toolsFor(bob, log)).toEqual([]);
  });
});

describe('user-level MCP provider over the memory store', () => {
  it('answers a caller without servers of their own with no tools, and one with servers as the store says', async () => {
    const memoryRegistrations = createUserMcpRegistrations({ store: createMemoryStore(), egress, maxServers: () => 5 });
    const local = createUserMcpProvider({ registrations: memoryRegistrations, egress, enabledFor: (tenant) => tenant !== 'disabled' });
    try {
      expect(await local.toolsFor(principal('acme', 'carol'), log)).toEqual([]);
      expect(await local.toolsFor(principal('disabled', 'alice'), log)).toEqual([]);
      await memoryRegistrations.put('acme', 'carol', 'svc-a', { url: upstreamA.url });
      expect(names(await local.toolsFor(principal('acme', 'carol'), log))).toContain('user_carol_tool_echo');
      await memoryRegistrations.put('disabled', 'alice', 'svc-a', { url: upstreamA.url });
      expect(await local.toolsFor(principal('disabled', 'alice'), log)).toEqual([]);
    } finally {
      await local.close();
    }
  });
});

describe('client cache', () => {
  it('bounds the number of clients (LRU) and evicts idle ones, closing what it drops', async () => {
    let clock = 1_000; // lru-cache reads a start time of 0 as "no ttl": a test clock starts later
    const closed: string[] = [];
    const cache = createClientCache<string>({ maxEntries: 2, idleMs: 100, now: () => clock, close: async (value) => void closed.push(value) });
    await cache.get('a', 'f', async () => 'A');
    await cache.get('b', 'f', async () => 'B');
    await cache.get('a', 'f', async () => 'A2'); // hit: a becomes most recent
    await cache.get('c', 'f', async () => 'C');
    expect(closed).toEqual(['B']);
    clock = 1_050;
    await cache.get('c', 'f', async () => 'C2');
    clock = 1_120;
    await cache.evictIdle();
    expect(closed).toEqual(['B', 'A']);
    expect(cache.size).toBe(1);
    await cache.get('c', 'changed', async () => 'C3');
    expect(closed).toEqual(['B', 'A', 'C']);
    await expect(cache.get('d', 'f', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(cache.size).toBe(1);
    await cache.closeAll();
    expect(closed).toEqual(['B', 'A', 'C', 'C3']);
  });
});
