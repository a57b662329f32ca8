// An SDK client of toolgate's /mcp that declares task support, and a tools/call made as a task: shared by
// the single-replica and the three-replica task tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { bearer } from './build.js';

export async function connectTaskClient(baseUrl: string, token: string, name: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } });
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(transport);
  return client;
}

export const callAsTask = async (client: Client, name: string, args: Record<string, unknown>): Promise<Task> =>
  (await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema)).task;
