// Speaking MCP 2026-07-28 to toolgate: raw POSTs with the `_meta` envelope and the Mcp-* headers as the spec
// has a client send them, and the SDK v2 client negotiating by itself.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { bearer } from './build.js';

export const MODERN_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface ModernPostOptions {
  /** The client capabilities of the envelope (default none). */
  capabilities?: Record<string, unknown>;
  /** Headers to add or override (e.g. a mismatching Mcp-Name). */
  headers?: Record<string, string>;
  /** Drop these envelope keys (to see the validation answer). */
  omitMeta?: string[];
  path?: string;
}

export interface ModernAnswer {
  status: number;
  headers: Headers;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

/** The name the Mcp-Name header carries for a method (SEP-2243): the tool or prompt name, the resource URI, the task id. */
function nameOf(method: string, params: Record<string, unknown>): string | undefined {
  if (method === 'tools/call' || method === 'prompts/get') return String(params.name);
  if (method === 'resources/read') return String(params.uri);
  if (method === 'tasks/get' || method === 'tasks/cancel') return String(params.taskId);
  return undefined;
}

export async function modernPost(baseUrl: string, token: string, method: string, params: Record<string, unknown> = {}, options: ModernPostOptions = {}): Promise<ModernAnswer> {
  const meta: Record<string, unknown> = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {},
  };
  for (const key of options.omitMeta ?? []) delete meta[key];
  const name = nameOf(method, params);
  const response = await fetch(`${baseUrl}${options.path ?? '/mcp'}`, {
    method: 'POST',
    headers: {
      ...bearer(token),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ModernAnswer['body'] };
}

/** The SDK v2 client with version negotiation on (`auto`: server/discover first, `initialize` only as the fallback). */
export async function connectModernClient(baseUrl: string, token: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'modern-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), { requestInit: { headers: bearer(token) } }));
  return client;
}
