// The baseline: a bare Fastify route doing the same JSON work as toolgate's /v1/execute (parse the
// body, run the demo get_weather handler, stringify a ToolResult-like object), and nothing else.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { packageRoot } from '../../src/config/demo.js';

interface DemoTool {
  name: string;
  handler: (args: Record<string, unknown>) => unknown;
}

const tools = (await import(pathToFileURL(join(packageRoot(), 'examples/functions/demo-tools.mjs')).href)).default as DemoTool[];
const byName = new Map(tools.map((tool) => [tool.name, tool]));

const app = Fastify({ logger: false });
app.post<{ Body: { name: string; arguments?: Record<string, unknown>; callId?: string } }>('/v1/execute', async (request, reply) => {
  const started = performance.now();
  const { name, arguments: args = {}, callId = randomUUID() } = request.body;
  const tool = byName.get(name);
  if (!tool) return reply.code(404).send({ error: 'unknown tool' });
  const value = await tool.handler(args);
  const result = {
    callId,
    name,
    ok: true,
    output: typeof value === 'string' ? value : JSON.stringify(value),
    source: 'function',
    durationMs: performance.now() - started,
    truncated: false,
    trace: null,
  };
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(result));
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
