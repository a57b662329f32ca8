import type { FastifyReply, FastifyRequest, onRequestHookHandler, preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { errors } from '../errors.js';
import type { TenantSlots } from '../http/tenant-slots.js';
import { sendRequestId } from './request-id.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The tenants' in-flight slots, for calls that run apart from a request (a task's detached run). */
    tenantSlots: TenantSlots;
  }
  interface FastifyRequest {
    /** Hands the release of the slot the request just took to its response's close; false when already closed. */
    holdSlot: ((release: () => void) => boolean) | null;
    /**
     * Gives the request's slot back now, before its response ends: a request that turned out to open a
     * long-lived stream (an MCP subscriptions/listen POST) holds none while it streams, as `opensStream` routes do.
     */
    releaseSlot: (() => void) | null;
  }
  interface FastifyContextConfig {
    /** The route runs tool calls: it also takes one of its tenant's `limits.maxInFlight` slots. */
    runsCalls?: boolean;
    /**
     * The route answers with a long-lived stream (MCP's GET event stream): it is shed like any request
     * while the replica is over its bound, but holds no slot while it streams, so idle listeners never
     * use up the slots of calls. Its own route bounds how many streams there can be.
     */
    opensStream?: boolean;
  }
}

// Health, readiness and metrics are exempt: a busy replica must not look dead to its orchestrator or
// go dark to its monitoring (metrics on the API port need the metrics token).
const UNBOUNDED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Overload protection and per-request accounting — the one place requests are counted against limits.
 * The order of a request's life:
 * 1. onRequest: the `x-request-id` header (request-id.ts), accounting, then the route's own onRequest hooks — authentication and role
 *    checks — so a request without a valid token is answered 401 before a byte of its body is read.
 * 2. The body arrives, bounded in size (`server.bodyLimit`) and time (`server.bodyTimeoutMs`, see body-deadline.ts).
 * 3. preHandler (here): the request takes its slot — authenticated routes from `server.maxInFlight`, routes
 *    that run calls also from their tenant's bound, public routes from a separate pool — only now, so a
 *    client trickling a body holds no slot, and unauthenticated requests never take an authenticated one.
 * Beyond a bound the replica sheds load (503 + Retry-After) instead of queueing without bound; while it
 * drains for shutdown it refuses every new request the same way (TG_NOT_READY, in onRequest), so the client
 * retries on another replica.
 * Slots are given back when the response closes. Each route gets its own hooks, built from what is known
 * at registration (a global hook would read `request.routeOptions`, a getter that allocates on every request). Requests that match no route are counted by the not-found handler (error-handler.ts).
 * The bounds are read from the live config on every request, so a reload changes them.
 */
export const admissionPlugin = fp(
  async (app) => {
    const { gateway, drain, metrics } = app;
    let inFlight = 0;
    let publicInFlight = 0;
    // Shared with code mode, whose inner calls count against the same tenant bound.
    const tenantInFlight = gateway.inFlight;
    metrics.watchInFlight(() => inFlight + publicInFlight);

    app.decorateRequest('holdSlot', null);
    app.decorateRequest('releaseSlot', null);
    /** A slot of the tenant's bound `limit`, or the bound (undefined for a tenant a reload removed) when all are taken. */
    const enterTenant = (tenant: string, limit: number | undefined): { entered: true } | { entered: false; limit: number | undefined } => {
      if (limit === undefined || !tenantInFlight.tryEnter(tenant, limit)) {
        if (limit !== undefined) metrics.countOverload('tenant');
        return { entered: false, limit };
      }
      return { entered: true };
    };
    app.decorate('tenantSlots', {
      async take(tenant) {
        if (!enterTenant(tenant, await gateway.inFlightLimit(tenant)).entered) return undefined;
        let held = true;
        return () => {
          if (held) tenantInFlight.leave(tenant);
          held = false;
        };
      },
    } satisfies TenantSlots);

    app.addHook('onRoute', (route) => {
      const label = route.url;
      const own = hooks(route.onRequest);
      const authenticated = own.includes(app.authenticate as onRequestHookHandler);
      if (hooks(route.preHandler).includes(app.authenticate as preHandlerHookHandler)) {
        // It would read (and wait for) the body of a request it is about to refuse.
        throw new Error(`route ${route.method} ${route.url}: authenticate is an onRequest hook, not a preHandler`);
      }
      const runsCalls = route.config?.runsCalls === true;
      const opensStream = route.config?.opensStream === true;
      if (runsCalls && opensStream) throw new Error(`route ${route.method} ${route.url}: a stream route cannot also run calls`);
      // The raw response's `close` comes once for every response: after it finished, or when the client left
      // first. Fastify's onResponse only follows a finished response, so a client that hung up mid-call would
      // keep its slot forever. A response closed before it was ended is a client that left, counted with
      // status 499 (nginx's). One listener per response: a second would cost every request.
      // (inject()'s simulated responses emit `close` too, after `end`.)
      const bounded = !UNBOUNDED.has(label);
      const track: onRequestHookHandler = (request, reply, done) => {
        sendRequestId(request, reply);
        const response = reply.raw;
        let closed = false;
        let release: (() => void) | undefined;
        response.on('close', () => {
          closed = true;
          release?.();
          metrics.countHttp(request.method, label, response.writableEnded ? String(reply.statusCode) : '499');
        });
        request.holdSlot = (next) => {
          if (closed) return false;
          release = next;
          return true;
        };
        request.releaseSlot = () => {
          const now = release;
          release = undefined;
          now?.();
        };
        if (bounded && drain.refusing) return done(unavailable(reply, new errors.TG_NOT_READY('gateway is shutting down, retry later')));
        done();
      };
      route.onRequest = [track, ...own];
      if (!bounded) return;

      /** Takes the server slot (and the tenant's, taken already for a route that runs calls) and hands its release to the response. */
      const admitted = (request: FastifyRequest, tenant: string, done: HookDone): void => {
        inFlight += 1;
        const release = (): void => {
          inFlight -= 1;
          if (runsCalls) tenantInFlight.leave(tenant);
        };
        // The client left while its body was read or its token verified: give the slot straight back.
        if (!request.holdSlot?.(release)) release();
        done();
      };
      /** A call route's request, once its tenant's bound is known; `late` when the tenant had to be compiled first. */
      const enterCalls = (request: FastifyRequest, reply: FastifyReply, done: HookDone, limit: number | undefined, late: boolean): void => {
        const tenant = request.principal.tenant;
        const entry = enterTenant(tenant, limit);
        // Removed by a reload while the body was read (authentication had found it): the tenant's answer.
        if (!entry.entered && entry.limit === undefined) return done(new errors.TG_UNKNOWN_TENANT());
        if (!entry.entered) return done(overloaded(reply, `tenant has ${entry.limit} calls in flight`));
        // Other requests may have taken the server's slots while the tenant compiled.
        if (late && inFlight >= gateway.config.server.maxInFlight) {
          tenantInFlight.leave(tenant);
          metrics.countOverload('server');
          return done(overloaded(reply, 'server is overloaded, retry later'));
        }
        admitted(request, tenant, done);
      };
      const admit: preHandlerHookHandler = authenticated
        ? (request, reply, done) => {
            if (inFlight >= gateway.config.server.maxInFlight) {
              metrics.countOverload('server');
              return done(overloaded(reply, 'server is overloaded, retry later'));
            }
            if (opensStream) return done();
            if (!runsCalls) return admitted(request, request.principal.tenant, done);
            // Once a shutdown cancelled the running calls, a request only now reaching its calls has not started:
            // 503 + Retry-After rather than a call cut short.
            if (drain.cancelled) return done(unavailable(reply, new errors.TG_NOT_READY('gateway is shutting down, retry later')));
            // A tenant the bounded cache dropped since authentication compiled it is compiled again, not refused.
            const limit = gateway.inFlightLimit(request.principal.tenant);
            if (!(limit instanceof Promise)) return enterCalls(request, reply, done, limit, false);
            limit.then(
              (known) => enterCalls(request, reply, done, known, true),
              (error: unknown) => done(error as Error),
            );
          }
        : (request, reply, done) => {
            if (publicInFlight >= gateway.config.server.maxPublicInFlight) {
              metrics.countOverload('public');
              return done(overloaded(reply, 'server is overloaded, retry later'));
            }
            publicInFlight += 1;
            const release = (): void => {
              publicInFlight -= 1;
            };
            if (!request.holdSlot?.(release)) release();
            done();
          };
      route.preHandler = [admit, ...hooks(route.preHandler)];
    });
  },
  // Routes registered before this plugin would escape it: every route plugin depends on it.
  { name: 'toolgate-admission', dependencies: ['toolgate-gateway', 'toolgate-auth'], decorators: { fastify: ['authenticate', 'gateway', 'drain', 'metrics'] } },
);

function unavailable(reply: FastifyReply, error: Error): Error {
  reply.header('retry-after', '1');
  return error;
}

function overloaded(reply: FastifyReply, message: string): Error {
  return unavailable(reply, new errors.TG_OVERLOADED(message));
}

type HookDone = Parameters<preHandlerHookHandler>[2];

function hooks<T>(own: T | T[] | undefined): T[] {
  return own === undefined ? [] : Array.isArray(own) ? own : [own];
}
