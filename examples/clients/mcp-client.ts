// toolgate as an MCP server, from the official SDK client.
//   TOOLGATE_URL=http://localhost:8080 TOOLGATE_API_KEY=... npx tsx examples/clients/mcp-client.ts [tool] ['{"json":"arguments"}']
// With TOOLGATE_TOOLSET=<name> it connects to /mcp/<name>, the toolset's own endpoint (the demo has "desk").
// Without a tool it calls the demo's get_weather when the pool has it, else the first tool that needs no argument.
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
const text = (content: unknown): string =>
  (Array.isArray(content) ? content : []).map((part: { type?: string; text?: string }) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
const [named, argsJson] = process.argv.slice(2);
const needsNoArgument = (tool: (typeof tools)[number]) => (tool.inputSchema.required ?? []).length === 0;
const chosen = named ?? (tools.some((tool) => tool.name === 'get_weather') ? 'get_weather' : tools.find(needsNoArgument)?.name);
if (!chosen) {
  console.log('no tool to call without arguments: name one, e.g. npx tsx examples/clients/mcp-client.ts <tool> \'{"key":"value"}\'');
} else {
  const args = argsJson ? (JSON.parse(argsJson) as Record<string, unknown>) : chosen === 'get_weather' && !named ? { city: 'Paris' } : {};
  const result = await client.callTool({ name: chosen, arguments: args });
  // A refused or failed call is still an answer: isError with the reason as text (TOOL_ERROR: {...}).
  console.log(`${chosen} ${result.isError ? 'failed' : 'answered'}:`, text(result.content));
}
// What a model reads when it names a tool that is not in its pool.
const failed = await client.callTool({ name: 'no_such_tool', arguments: {} });
console.log('an unknown tool answers:', text(failed.content));
await client.close();
