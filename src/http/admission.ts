import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { errors } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Holds one of the replica's in-flight slots until the response completes or the client goes away. */
    admitted: boolean;
  }
}

// Health, readiness and metrics are exempt: a busy replica must not look dead to its orchestrator.
const UNBOUNDED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Overload protection and per-request accounting. Beyond `maxInFlight` requests a replica sheds load
 * (503 + Retry-After) instead of queueing without bound; while it drains for shutdown it refuses every
 * new request the same way (TG_NOT_READY), so the client retries on another replica. Each route gets its
 * own onRequest hook that knows the route's pattern from registration: a global hook would read `request.routeOptions`, a getter
 * that builds a fresh object on every access, and that showed under load. Requests that match no route
 * are counted by the not-found handler (`countUnmatched`).
 */
export interface AdmissionLimits {
  maxInFlight: () => number;
  /** True while the replica drains for shutdown: every new request answers 503 + Retry-After. */
  refusing: () => boolean;
}

export function installAdmission(app: FastifyInstance, { maxInFlight, refusing }: AdmissionLimits, metrics: GatewayMetrics): { countUnmatched: (request: FastifyRequest, status: number) => void } {
  let inFlight = 0;
  metrics.watchInFlight(() => inFlight);
  app.decorateRequest('admitted', false);

  app.addHook('onRoute', (route) => {
    const label = route.url;
    // The raw response's `close` comes once for every response: after it finished, or when the client left
    // first. Fastify's onResponse only follows a finished response, so a client that hung up mid-call would
    // keep its slot forever (and enough of them would shed every request); onRequestAbort only covers a
    // client that leaves during the upload. A response closed before it was ended is a client that left,
    // counted with status 499 (nginx's). One listener, not `finish` and `close`: a second listener per
    // response showed under load. (inject()'s simulated responses emit `close` too, after `end`.)
    const track = (request: FastifyRequest, reply: FastifyReply): void => {
      const response = reply.raw;
      response.on('close', () => {
        if (request.admitted) {
          request.admitted = false;
          inFlight -= 1;
        }
        metrics.countHttp(request.method, label, response.writableEnded ? String(reply.statusCode) : '499');
      });
    };
    const admit: onRequestHookHandler = UNBOUNDED.has(label)
      ? (request, reply, done) => {
          reply.header('x-request-id', request.id);
          track(request, reply);
          done();
        }
      : (request, reply, done) => {
          reply.header('x-request-id', request.id);
          track(request, reply);
          if (refusing()) {
            reply.header('retry-after', '1');
            return done(new errors.TG_NOT_READY('gateway is shutting down, retry later'));
          }
          if (inFlight >= maxInFlight()) {
            reply.header('retry-after', '1');
            return done(new errors.TG_OVERLOADED('server is overloaded, retry later'));
          }
          inFlight += 1;
          request.admitted = true;
          done();
        };
    route.onRequest = [admit, ...hooks(route.onRequest)];
  });

  return {
    countUnmatched: (request, status) => metrics.countHttp(request.method, 'unmatched', String(status)),
  };
}

function hooks<T>(own: T | T[] | undefined): T[] {
  return own === undefined ? [] : Array.isArray(own) ? own : [own];
}
