// toolgate from TypeScript (Node 20+, global fetch).
//   TOOLGATE_URL=http://localhost:8080 TOOLGATE_API_KEY=... npx tsx examples/clients/typescript-client.ts
const base = process.env.TOOLGATE_URL ?? 'http://localhost:8080';
const key = process.env.TOOLGATE_API_KEY;
if (!key) {
  console.error('set TOOLGATE_API_KEY to an API key (npm start prints the demo one), e.g. export TOOLGATE_API_KEY=tg_demo_…');
  process.exit(2);
}

interface ToolResult {
  callId: string;
  name: string;
  ok: boolean;
  output: string;
  error?: { errorType: string; error: string };
}

async function toolgate<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(base + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as T;
}

// The tools in Anthropic's shape (pass them as `tools` to messages.create).
const tools = await toolgate<Array<{ name: string }>>('/v1/tools?format=anthropic');
console.log('tools:', tools.map((tool) => tool.name).join(', '));

// One model turn with two tool calls, run in one batch; results come back in call order.
const batch = await toolgate<{ results: ToolResult[] }>('/v1/execute/batch', {
  step: 0,
  calls: [
    { name: 'get_weather', arguments: { city: 'Tokyo' } },
    { name: 'add_numbers', arguments: { numbers: [1, 2, 3] } },
  ],
}).catch(() => undefined);
if (batch?.results) for (const result of batch.results) console.log('batch:', result.callId, result.output);

const single = await toolgate<ToolResult>('/v1/execute', { name: 'add_numbers', arguments: { numbers: [40, 2] } });
console.log('result:', single.ok, single.output);
