// A local MCP module (config: mcp.local: [{ service: calc, module: ./examples/mcp/calc.mjs }]): its default
// export is an SDK McpServer, or a function returning one. Written on the MCP SDK v2 (`@modelcontextprotocol/server`),
// which toolgate ships; a module on the 1.x SDK (`@modelcontextprotocol/sdk`) brings it in its own node_modules.
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

const server = new McpServer({ name: 'calc', version: '1.0.0' });
server.registerTool(
  'add',
  { description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }), annotations: { readOnlyHint: true } },
  async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
);
export default server;
