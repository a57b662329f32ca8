import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

/**
 * The metrics listener (`metrics: {host, port}`, 127.0.0.1:9464 by default, as Prometheus exporters do):
 * its own Fastify instance, apart from the API port, because the figures cover every tenant (tool names,
 * call counts). It serves only `GET /metrics`; src/server.ts listens on it. Tests use `inject`.
 */
export function createMetricsServer(registry: Registry): FastifyInstance {
  const server = Fastify({ logger: false });
  server.get('/metrics', async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  server.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ statusCode: 404, code: 'TG_NOT_FOUND', error: 'Not Found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
  return server;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Constant-time check of a presented metrics token against `metrics.token` (digests, so lengths never leak). */
export function metricsTokenMatches(presented: string | undefined, expected: string): boolean {
  return presented !== undefined && timingSafeEqual(digest(presented), digest(expected));
}
