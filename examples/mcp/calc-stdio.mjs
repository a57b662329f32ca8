// examples/mcp/calc.mjs as a stdio MCP server (config: mcp.local: [{ service: calc, transport: stdio,
// command: node, args: [./examples/mcp/calc-stdio.mjs] }]): the shape of any MCP server toolgate spawns.
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import server from './calc.mjs';

await server.connect(new StdioServerTransport());
