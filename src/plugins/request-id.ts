import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RawRequestDefaultExpression } from 'fastify';

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
 * Every answer carries `x-request-id`. No root hook sets it (a hook dispatch on every request for one header):
 * admission's per-route onRequest hook (every route) sets it first, the 404 handler for requests without a
 * route, and the error handler for answers refused before a route's hooks ran (load shedding's 503s, sent
 * from under-pressure's root hook). Answers written on the raw response (the MCP endpoint's streams) set it themselves.
 */
export function sendRequestId(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
}
