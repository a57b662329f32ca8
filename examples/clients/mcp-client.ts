// toolgate as an MCP server, from the official SDK client.
//   TOOLGATE_URL=http://localhost:8080 TOOLGATE_API_KEY=... npx tsx examples/clients/mcp-client.ts
// With TOOLGATE_TOOLSET=<name> it connects to /mcp/<name>, the toolset's own endpoint (the demo has "desk").
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const base = process.env.TOOLGATE_URL ?? 'http://localhost:8080';
const key = process.env.TOOLGATE_API_KEY;
const toolset = process.env.TOOLGATE_TOOLSET;
if (!key) {
  console.error('set TOOLGATE_API_KEY to an API key (npm start prints the demo one), e.g. export TOOLGATE_API_KEY=tg_demo_…');
  process.exit(2);
}
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(toolset ? `${base}/mcp/${encodeURIComponent(toolset)}` : `${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  }),
);
const { tools } = await client.listTools();
console.log('tools:', tools.map((tool) => tool.name).join(', '));
const result = await client.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
console.log('result:', JSON.stringify(result.content));
const failed = await client.callTool({ name: 'no_such_tool', arguments: {} });
console.log('isError:', failed.isError);
await client.close();
