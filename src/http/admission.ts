import type { FastifyInstance, FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import { errors } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Holds one of the replica's in-flight slots until the response completes. */
    admitted: boolean;
  }
}

// Health, readiness and metrics are exempt: a busy replica must not look dead to its orchestrator.
const UNBOUNDED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Overload protection and per-request accounting. Beyond `maxInFlight` requests a replica sheds load
 * (503 + Retry-After) instead of queueing without bound. Each route gets its own onRequest/onResponse
 * hooks that know the route's pattern from registration: global hooks would read `request.routeOptions`,
 * a getter that builds a fresh object on every access, and paying that twice per request showed under
 * load. Requests that match no route are counted by the not-found handler (`countUnmatched`).
 */
export function installAdmission(app: FastifyInstance, maxInFlight: () => number, metrics: GatewayMetrics): { countUnmatched: (request: FastifyRequest, status: number) => void } {
  let inFlight = 0;
  metrics.watchInFlight(() => inFlight);
  app.decorateRequest('admitted', false);

  app.addHook('onRoute', (route) => {
    const label = route.url;
    const admit: onRequestHookHandler = UNBOUNDED.has(label)
      ? (request, reply, done) => {
          reply.header('x-request-id', request.id);
          done();
        }
      : (request, reply, done) => {
          reply.header('x-request-id', request.id);
          if (inFlight >= maxInFlight()) {
            reply.header('retry-after', '1');
            return done(new errors.TG_OVERLOADED('server is overloaded, retry later'));
          }
          inFlight += 1;
          request.admitted = true;
          done();
        };
    const complete: onResponseHookHandler = (request, reply, done) => {
      if (request.admitted) {
        request.admitted = false;
        inFlight -= 1;
      }
      metrics.countHttp(request.method, label, String(reply.statusCode));
      done();
    };
    route.onRequest = [admit, ...hooks(route.onRequest)];
    route.onResponse = [...hooks(route.onResponse), complete];
  });

  return {
    countUnmatched: (request, status) => metrics.countHttp(request.method, 'unmatched', String(status)),
  };
}

function hooks<T>(own: T | T[] | undefined): T[] {
  return own === undefined ? [] : Array.isArray(own) ? own : [own];
}
