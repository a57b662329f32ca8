// A modern-only MCP server for tests: SDK v2's createMcpHandler with `legacy: 'reject'` (2026-07-28 only,
// stateless, no initialize), a fresh low-level Server per request, on node:http bound to 127.0.0.1:0. It
// records the JSON-RPC methods it was sent, so tests can see the probe and the absence of `initialize`.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { acceptedContent, createMcpHandler, inputRequired, Server, type CallToolResult, type InputRequiredResult, type ServerContext, type Tool } from '@modelcontextprotocol/server';

export interface ModernTool {
  definition: Tool;
  /** May answer `inputRequired(...)`: the client fulfils it and calls again with `ctx.mcpReq.inputResponses`. */
  call: (args: Record<string, unknown>, ctx: ServerContext) => Promise<CallToolResult | InputRequiredResult> | CallToolResult | InputRequiredResult;
}

export interface ModernUpstream {
  url: string;
  /** The JSON-RPC method of every POST received, in order. */
  methods: string[];
  /** The `params` of every POST received, in order. */
  params: unknown[];
  /** The headers of every POST received, in order. */
  headers: IncomingHttpHeaders[];
  /** Tells every open `subscriptions/listen` stream that the tool list changed (after the tools array was changed). */
  toolsChanged(): void;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Node request → web Request → the SDK handler → node response (a JSON body or an event stream, streamed). */
async function serve(handler: ReturnType<typeof createMcpHandler>, req: IncomingMessage, res: ServerResponse, seen: Pick<ModernUpstream, 'methods' | 'params' | 'headers'>): Promise<void> {
  const raw = req.method === 'POST' ? await body(req) : undefined;
  if (raw) {
    try {
      const message = JSON.parse(raw.toString('utf8')) as { method?: unknown; params?: unknown };
      if (typeof message.method === 'string') {
        seen.methods.push(message.method);
        seen.params.push(message.params);
        seen.headers.push(req.headers);
      }
    } catch {
      // Not JSON: the handler answers it.
    }
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(raw ? { body: new Uint8Array(raw) } : {}) });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (!response.body) {
    res.end();
    return;
  }
  Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(res);
}

/** `tools` is read on every request: a test may change it, then call toolsChanged(). */
export async function startModernUpstream(tools: ModernTool[]): Promise<ModernUpstream> {
  const seen: Pick<ModernUpstream, 'methods' | 'params' | 'headers'> = { methods: [], params: [], headers: [] };
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: 'modern-upstream', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
      server.setRequestHandler('tools/list', async () => ({ tools: tools.map((tool) => tool.definition) }));
      server.setRequestHandler('tools/call', async (request, ctx) => {
        const tool = tools.find((candidate) => candidate.definition.name === request.params.name);
        if (!tool) return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
        return tool.call(request.params.arguments ?? {}, ctx);
      });
      return server;
    },
    { legacy: 'reject' },
  );
  const http: HttpServer = createServer((req, res) => {
    serve(handler, req, res, seen).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    ...seen,
    toolsChanged: () => handler.notify.toolsChanged(),
    close: async () => {
      await handler.close();
      await new Promise<void>((done) => {
        http.closeAllConnections();
        http.close(() => done());
      });
    },
  };
}

/** `m_confirm`: asks its caller for a colour with its own `input_required`, then answers `modern asked:<colour>`. */
export const confirmTool: ModernTool = {
  definition: { name: 'm_confirm', description: 'asks before answering', inputSchema: { type: 'object', properties: {} } },
  call: (_args, ctx) => {
    const answer = acceptedContent<{ colour: string }>(ctx.mcpReq.inputResponses, 'colour');
    if (answer) return { content: [{ type: 'text', text: `modern asked:${answer.colour}` }] };
    return inputRequired({ inputRequests: { colour: inputRequired.elicit({ message: 'Which colour (modern)?', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] } }) } });
  },
};
