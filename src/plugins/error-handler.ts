import type { FastifyError } from 'fastify';
import fp from 'fastify-plugin';
import { DomainError, gatewayErrorOf } from '../errors.js';
import { bodyPending } from './body-deadline.js';
import { sendRequestId } from './request-id.js';

/**
 * Every error answers Fastify's error body with a `TG_*` code (src/errors.ts): the table's own errors as
 * they are, domain errors as their code says (gatewayErrorOf), Fastify's mapped by status, and anything
 * else a 500 whose message is hidden (and logged).
 * A request that matched no route answers 404 `TG_NOT_FOUND`, counted under the route label `unmatched`.
 */
export const errorHandlerPlugin = fp(
  async (app) => {
    app.setErrorHandler((raised: FastifyError, request, reply) => {
      const error: FastifyError = gatewayErrorOf(raised) ?? raised;
      // Set already by the route's admission hook, unless a root hook answered first (load shedding; request-id.ts).
      if (!reply.hasHeader('x-request-id')) sendRequestId(request, reply);
      if (raised instanceof DomainError && raised.retryAfterMs !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(raised.retryAfterMs / 1000))));
      if (bodyPending(request.raw)) reply.header('connection', 'close');
      const status = error.statusCode ?? 500;
      if (status >= 500 && !error.code?.startsWith('TG_')) {
        request.log.error({ err: error }, 'request failed');
        return reply.code(500).send({ statusCode: 500, code: 'TG_INTERNAL', error: 'Internal Server Error', message: 'internal server error' });
      }
      const code = error.code?.startsWith('TG_') ? error.code : mapFastifyCode(error, status);
      if (status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
      return reply.code(status).send({ statusCode: status, code, error: reasonPhrase(status), message: error.message });
    });
    app.setNotFoundHandler((request, reply) => {
      app.metrics.countHttp(request.method, 'unmatched', '404');
      // No route, so no admission hook: the header is set here.
      sendRequestId(request, reply);
      reply.code(404).send({ statusCode: 404, code: 'TG_NOT_FOUND', error: 'Not Found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
    });
  },
  { name: 'toolgate-error-handler', dependencies: ['toolgate-gateway'] },
);

function mapFastifyCode(error: FastifyError, status: number): string {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return 'TG_PAYLOAD_TOO_LARGE';
  if (status === 404) return 'TG_NOT_FOUND';
  if (status === 415) return 'TG_UNSUPPORTED_MEDIA_TYPE';
  return 'TG_BAD_REQUEST';
}

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout', 409: 'Conflict',
  413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable',
};
function reasonPhrase(status: number): string {
  return REASONS[status] ?? 'Error';
}
