import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JSONRPCMessage, Tool as McpTool, Transport } from '@modelcontextprotocol/client';
import { ToolError } from '../../../../src/call/tool-error.js';
import { callsDirectly } from '../../../../src/mcp/client/direct-call.js';
import { callUpstreamTool, listAllTools, openSession, type UpstreamSession } from '../../../../src/mcp/client/upstream-session.js';

// A plain tool's call skips the SDK's callTool() (src/mcp/client/direct-call.ts); what it accepts must stay what
// callTool() accepts. The upstream is a raw JSON-RPC peer, so it can answer bodies no SDK server would send.

const plain = (name: string): McpTool => ({ name, inputSchema: { type: 'object', properties: { message: { type: 'string' } } } });
const tools: McpTool[] = [
  plain('echo'),
  plain('body'),
  { name: 'typed', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
];

/** A legacy-era server (answers server/discover with method-not-found) whose `body` tool answers `bodies[arguments.kind]`. */
function rawServer(bodies: Record<string, unknown>): { connect(transport: Transport): Promise<void>; close(): Promise<void> } {
  let peer: Transport | undefined;
  const answer = (id: unknown, result: unknown): void => void peer?.send({ jsonrpc: '2.0', id, result } as JSONRPCMessage);
  return {
    async connect(transport) {
      peer = transport;
      transport.onmessage = (message) => {
        const request = message as { id?: unknown; method?: string; params?: { name?: string; arguments?: { kind?: string; message?: string } } };
        if (request.id === undefined) return;
        if (request.method === 'initialize') answer(request.id, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } });
        else if (request.method === 'tools/list') answer(request.id, { tools });
        else if (request.method === 'tools/call' && request.params?.name === 'echo') answer(request.id, { content: [{ type: 'text', text: `Echo: ${request.params.arguments?.message}` }] });
        else if (request.method === 'tools/call') answer(request.id, bodies[String(request.params?.arguments?.kind)]);
        else void transport.send({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } } as JSONRPCMessage);
      };
      await transport.start();
    },
    async close() {
      await peer?.close();
    },
  };
}

const bodies = {
  text: { content: [{ type: 'text', text: 'ok' }] },
  contentless: {},
  structured: { content: [], structuredContent: { n: 1 } },
  // Another result family without content: not an empty success.
  task: { task: { taskId: 't1', status: 'working' } },
  // The 2025-era wire types structuredContent as an object.
  'structured-array': { content: [], structuredContent: [1, 2] },
  'bad-content': { content: 'no' },
  'typed-ok': { content: [], structuredContent: { n: 1 } },
  'typed-wrong': { content: [], structuredContent: { n: 'one' } },
  'typed-missing': { content: [] },
};

const sessions: UpstreamSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.close()));
});

async function connected(): Promise<UpstreamSession> {
  const session = await openSession({ transport: 'in-memory', server: () => rawServer(bodies) }, { label: 'raw', log: pino({ level: 'silent' }), timeoutMs: 5_000 });
  sessions.push(session);
  await listAllTools(session, { timeoutMs: 5_000, maxPages: 5 });
  return session;
}

async function outcome(promise: Promise<unknown>): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

describe('direct upstream tool calls', () => {
  it('calls directly only a tool without an outputSchema or a header declaration', () => {
    expect(callsDirectly(plain('echo'))).toBe(true);
    expect(callsDirectly(tools[2]!)).toBe(false);
    expect(callsDirectly({ name: 'h', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } })).toBe(false);
  });

  it("skips callTool() for a plain listed tool and uses it for one with an outputSchema", async () => {
    const session = await connected();
    expect(session.era).toBe('legacy');
    const callTool = vi.spyOn(session.client, 'callTool');
    const target = { session, service: 'raw', onLost: () => {} };
    expect(await callUpstreamTool(target, 'echo', { message: 'hi' })).toEqual({ content: [{ type: 'text', text: 'Echo: hi' }] });
    expect(callTool).not.toHaveBeenCalled();
    await callUpstreamTool(target, 'typed', { kind: 'typed-ok' });
    expect(callTool).toHaveBeenCalledTimes(1);
  });

  it.each(Object.keys(bodies))('accepts or refuses the %s body exactly as callTool() does', async (kind) => {
    const session = await connected();
    const name = kind.startsWith('typed') ? 'typed' : 'body';
    const viaSdk = await outcome(session.client.callTool({ name, arguments: { kind } }, { toolDefinition: session.listed.get(name)! }));
    const ours = await outcome(callUpstreamTool({ session, service: 'raw', onLost: () => {} }, name, { kind }));
    expect(ours.ok).toBe(viaSdk.ok);
    if (ours.ok && viaSdk.ok) expect(ours.value).toEqual(viaSdk.value);
    if (!ours.ok) {
      expect(ours.error).toBeInstanceOf(ToolError);
      expect((ours.error as ToolError).errorType).toBe('UPSTREAM_ERROR');
    }
  });

  it('refuses what the 2025-era wire refuses and defaults a contentless body to no content', async () => {
    const session = await connected();
    const target = { session, service: 'raw', onLost: () => {} };
    expect(await callUpstreamTool(target, 'body', { kind: 'contentless' })).toEqual({ content: [] });
    for (const kind of ['task', 'structured-array', 'bad-content']) {
      const result = await outcome(callUpstreamTool(target, 'body', { kind }));
      expect(result.ok, kind).toBe(false);
    }
  });
});
