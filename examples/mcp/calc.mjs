// A local MCP module (config: mcp.local: [{ service: calc, module: ./examples/mcp/calc.mjs }]): its default
// export is an SDK McpServer, or a function returning one.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

const server = new McpServer({ name: 'calc', version: '1.0.0' });
server.registerTool(
  'add',
  { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
  async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
);
export default server;
