import { randomUUID } from 'node:crypto';
import type { RawRequestDefaultExpression } from 'fastify';
import fp from 'fastify-plugin';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id (Fastify's `genReqId`): the caller's `x-request-id` when it is a short token, else a new
 * UUID, so a hostile header never reaches a log line or a response header as sent.
 */
export function requestIdOf(req: RawRequestDefaultExpression): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Every answer carries `x-request-id`: one root hook, before any route's own, so routes, the 404 handler and
 * the error handler (which keeps the headers already set) all send it. Answers written on the raw response
 * (the MCP endpoint's streams) set it themselves.
 */
export const requestIdPlugin = fp(
  async (app) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      done();
    });
  },
  { name: 'toolgate-request-id' },
);
