// A real MCP server for tests: the SDK's McpServer over streamable HTTP (stateless, one server per
// request) on a node:http server bound to 127.0.0.1, port 0. It records the headers it receives
// so tests can assert what reached the upstream.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

export interface UpstreamTool {
  definition: Tool;
  call: (args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult> | CallToolResult;
}

export interface TestUpstream {
  url: string;
  port: number;
  /** Headers of every HTTP request received, in order. */
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startMcpUpstream(tools: UpstreamTool[]): Promise<TestUpstream> {
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer(async (req, res) => {
    requests.push(req.headers);
    const mcp = new McpServer({ name: 'test-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((tool) => tool.definition) }));
    mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = tools.find((candidate) => candidate.definition.name === request.params.name);
      if (!tool) return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
      return tool.call(request.params.arguments ?? {}, extra.signal);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

export const textTool = (name: string, reply: (args: Record<string, unknown>) => string, extra: Partial<Tool> = {}): UpstreamTool => ({
  definition: { name, description: `${name} tool`, inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, ...extra },
  call: (args) => ({ content: [{ type: 'text', text: reply(args) }] }),
});
