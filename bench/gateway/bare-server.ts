// The baseline: a bare Fastify route doing the same JSON work as toolgate's /v1/execute (parse the
// body, run the demo get_weather handler, stringify a ToolResult-like object), and nothing else.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { demoTools, resultBody } from './demo-call.js';

const app = Fastify({ logger: false });
app.post<{ Body: { name: string; arguments?: Record<string, unknown>; callId?: string } }>('/v1/execute', async (request, reply) => {
  const started = performance.now();
  const { name, arguments: args = {}, callId = randomUUID() } = request.body;
  const tool = demoTools.get(name);
  if (!tool) return reply.code(404).send({ error: 'unknown tool' });
  const value = await tool.handler(args);
  return reply.type('application/json; charset=utf-8').send(resultBody(callId, name, value, performance.now() - started));
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
