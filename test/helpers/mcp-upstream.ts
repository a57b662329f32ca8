// A real MCP server for tests: the SDK's McpServer over streamable HTTP (stateless, one server per
// request) on a node:http server bound to 127.0.0.1, port 0. It records the headers it receives
// so tests can assert what reached the upstream.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
    await serveStateless(createTestMcpServer(tools), req, res);
  });
  return listenOnLoopback(server, '/mcp', requests);
}

/** Answers one HTTP request with a fresh server over a stateless streamable HTTP transport (JSON responses). */
export async function serveStateless(mcp: McpServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res);
}

async function listenOnLoopback(server: Server, path: string, requests: IncomingHttpHeaders[]): Promise<TestUpstream> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function createTestMcpServer(tools: UpstreamTool[]): McpServer {
  const mcp = new McpServer({ name: 'test-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((tool) => tool.definition) }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.find((candidate) => candidate.definition.name === request.params.name);
    if (!tool) return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
    return tool.call(request.params.arguments ?? {}, extra.signal);
  });
  return mcp;
}

export const textTool = (name: string, reply: (args: Record<string, unknown>) => string, extra: Partial<Tool> = {}): UpstreamTool => ({
  definition: { name, description: `${name} tool`, inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, ...extra },
  call: (args) => ({ content: [{ type: 'text', text: reply(args) }] }),
});

/** An old-style server that speaks only the HTTP+SSE transport (GET stream + POST /messages). */
export async function startSseOnlyUpstream(tools: UpstreamTool[]): Promise<TestUpstream> {
  const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js');
  const requests: IncomingHttpHeaders[] = [];
  const sessions = new Map<string, InstanceType<typeof SSEServerTransport>>();
  const server: Server = createServer(async (req, res) => {
    requests.push(req.headers);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      const mcp = createTestMcpServer(tools);
      res.on('close', () => sessions.delete(transport.sessionId));
      await mcp.connect(transport);
      return;
    }
    const session = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && url.pathname === '/messages' && session) {
      await session.handlePostMessage(req, res);
      return;
    }
    res.writeHead(405).end();
  });
  return listenOnLoopback(server, '/sse', requests);
}
