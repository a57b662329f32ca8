// Global and user-level MCP servers share one client stack: the same upstream answers the same model
// string and trace, the same errors, and receives the same X-Toolgate-Depth, whichever way it is configured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpGlobalEntry } from '../../../src/config/types.js';
import { createGlobalMcpProvider } from '../../../src/mcp/client/global-provider.js';
import type { McpProvider } from '../../../src/mcp/client/mcp-provider.js';
import { mcpContentOf } from '../../../src/call/mcp-content.js';
import type { Tool, ToolContext, ToolOutput } from '../../../src/call/types.js';
import { createUserMcpProvider, type UserMcpProvider } from '../../../src/mcp/user/user-mcp-provider.js';
import { createUserMcpRegistrations } from '../../../src/mcp/user/registrations.js';
import { alice, silentLog as log, toolContext } from '../../fixtures/mcp/context.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../../helpers/mcp-upstream.js';
import { createTestStore } from '../../helpers/memory-store.js';

let upstream: TestUpstream;
let global: McpProvider;
let user: UserMcpProvider;
let globalTools: readonly Tool[];
let userTools: readonly Tool[];

const PNG = 'iVBORw0KGgo='; // 8 bytes once decoded

beforeAll(async () => {
  upstream = await startMcpUpstream([
    textTool('echo', (args) => `echo:${String(args.text)}`),
    {
      definition: { name: 'chart', inputSchema: { type: 'object' } },
      call: () => ({
        content: [
          { type: 'text', text: 'the chart' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///chart.png', name: 'chart.png' },
        ],
      }),
    },
    { definition: { name: 'broken', inputSchema: { type: 'object' } }, call: () => ({ content: [{ type: 'text', text: 'disk full' }], isError: true }) },
  ]);
  const entry = { id: 'shared', transport: 'streamable-http', url: upstream.url, headers: {}, required: true, defer: false, pin: false, forwardIdentity: {} } as McpGlobalEntry;
  global = createGlobalMcpProvider([entry], { log });
  await global.start?.();
  globalTools = global.tools();

  const egress = { allow: ['127.0.0.1'] };
  const registrations = createUserMcpRegistrations({ store: createTestStore(), egress, maxServers: () => 1 });
  await registrations.put(alice.tenant, alice.user, 'mine', { url: upstream.url, transport: 'streamable-http', headers: {} });
  user = createUserMcpProvider({ registrations, egress });
  userTools = await user.toolsFor(alice, log);
});

afterAll(async () => {
  await global?.close?.();
  await user?.close();
  await upstream?.close();
});

function both(tool: string): [Tool, Tool] {
  const fromGlobal = globalTools.find((candidate) => candidate.name === tool);
  const fromUser = userTools.find((candidate) => candidate.name === `user_alice_tool_${tool}`);
  if (!fromGlobal || !fromUser) throw new Error(`${tool} missing: ${globalTools.map((t) => t.name)} / ${userTools.map((t) => t.name)}`);
  return [fromGlobal, fromUser];
}

const settle = (tool: Tool, ctx: ToolContext): Promise<unknown> => Promise.resolve(tool.handler({}, ctx)).catch((error: unknown) => error);

describe('one MCP client stack for global and user-level servers', () => {
  it('renders rich content the same way: text joined, an image as its type and size, the whole result in the trace', async () => {
    const expected = {
      output: 'the chart\n[image image/png 8 bytes]\n[resource_link file:///chart.png chart.png]',
      trace: { content: [{ type: 'text', text: 'the chart' }, { type: 'image', data: PNG, mimeType: 'image/png' }, { type: 'resource_link', uri: 'file:///chart.png', name: 'chart.png' }] },
    };
    for (const tool of both('chart')) {
      const mapped = (await tool.handler({}, toolContext())) as ToolOutput;
      expect({ output: mapped.output, trace: mapped.trace }).toEqual(expected);
      // The MCP endpoint's copy of the blocks, as the upstream sent them.
      expect(mcpContentOf(mapped)).toEqual({ content: expected.trace.content });
    }
  });

  it('answers text alone without a trace, and an upstream isError as UPSTREAM_ERROR with its text', async () => {
    for (const tool of both('echo')) expect(await tool.handler({ text: 'hi' }, toolContext())).toEqual({ output: 'echo:hi', trace: null });
    for (const tool of both('broken')) {
      expect(await settle(tool, toolContext())).toMatchObject({ errorType: 'UPSTREAM_ERROR', message: 'disk full', trace: { isError: true } });
    }
  });

  it('sends X-Toolgate-Depth as depth + 1 on the call, and 1 outside a call', async () => {
    for (const tool of both('echo')) {
      const before = upstream.requests.length;
      await tool.handler({ text: 'x' }, toolContext({ depth: 4 }));
      expect(upstream.requests.slice(before).map((headers) => headers['x-toolgate-depth'])).toEqual(['5']);
    }
    expect(upstream.requests[0]?.['x-toolgate-depth']).toBe('1');
  });
});
