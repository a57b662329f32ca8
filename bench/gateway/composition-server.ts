// The minimal composition: what toolgate's own libraries allow on its hot path, with nothing of toolgate in
// it. Fastify with its default request logging (pino, two lines per request: "incoming request" and
// "request completed") into pino's own asynchronous destination on /dev/null, an HS256 JWT verified by jose
// once and then served from an LRU of verified tokens (lru-cache), one prom-client histogram observation
// per call, and the same JSON work as the bare route (bench/gateway/bare-server.ts).
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import pino from 'pino';
import { Histogram, Registry } from 'prom-client';
import { demoTools, resultBody } from './demo-call.js';
import { BENCH_AUDIENCE, BENCH_ISSUER, BENCH_JWT_SECRET } from './token.js';

const secret = new TextEncoder().encode(BENCH_JWT_SECRET);
const verified = new LRUCache<string, JWTPayload>({ max: 10_000, ttl: 300_000 });
const registry = new Registry();
const duration = new Histogram({ name: 'tool_call_duration_seconds', help: 'tool calls', labelNames: ['tool', 'outcome'], registers: [registry] });

const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }));
const app = Fastify({ loggerInstance: logger });
app.post<{ Body: { name: string; arguments?: Record<string, unknown>; callId?: string } }>('/v1/execute', async (request, reply) => {
  const started = performance.now();
  const header = request.headers.authorization;
  const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
  if (token === undefined) return reply.code(401).send({ error: 'unauthenticated' });
  let claims = verified.get(token);
  if (claims === undefined) {
    try {
      claims = (await jwtVerify(token, secret, { issuer: BENCH_ISSUER, audience: BENCH_AUDIENCE, algorithms: ['HS256'] })).payload;
    } catch {
      return reply.code(401).send({ error: 'unauthenticated' });
    }
    verified.set(token, claims);
  }
  const { name, arguments: args = {}, callId = randomUUID() } = request.body;
  const tool = demoTools.get(name);
  if (!tool) return reply.code(404).send({ error: 'unknown tool' });
  const value = await tool.handler(args);
  const durationMs = performance.now() - started;
  duration.observe({ tool: name, outcome: 'ok' }, durationMs / 1000);
  return reply.type('application/json; charset=utf-8').send(resultBody(callId, name, value, durationMs));
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
