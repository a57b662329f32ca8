import { performance } from 'node:perf_hooks';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE } from '@opentelemetry/semantic-conventions';
import type { Attributes } from '@opentelemetry/api';
import type { Principal } from '../call/principal.js';
import { endSpan, startServerSpan, type IncomingHeaders, type TraceContext, type TracingHandle } from '../observability/tracing.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Where the route's own protocol carries W3C trace context when the request's headers do not (MCP:
     * `params._meta`); read from the parsed body, and only for an authenticated caller.
     */
    traceCarrier?: (body: unknown) => IncomingHeaders | undefined;
    /**
     * The server span's name and extra attributes from the parsed body, when the route's protocol names the
     * operation better than the HTTP route does (MCP: `tools/call <tool>`); only for an authenticated caller.
     */
    spanName?: (body: unknown) => { name: string; attributes: Attributes } | undefined;
  }
  interface FastifyRequest {
    /** The request's server span while tracing is on (src/observability/tracing.ts); undefined when off. */
    traceContext: TraceContext | undefined;
    /** When the request arrived (epoch ms), the server span's start. */
    traceStart: number;
  }
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * The HTTP server span of every request, when tracing is on; when off, only the `traceContext`
 * decoration (undefined) exists and no hook runs. The span starts at onRequest time but is created only
 * after authentication (the route's own onRequest hook): a caller with a valid token continues its
 * incoming `traceparent`/`tracestate`, anyone else starts a new trace. @fastify/otel is not used for this
 * span because it joins the incoming trace in its onRequest hook, before toolgate knows who is calling.
 */
export const tracingPlugin = fp<{ tracing: TracingHandle | undefined }>(
  async (app, { tracing }) => {
    app.decorateRequest('traceContext', undefined);
    if (tracing === undefined) return;
    app.decorateRequest('traceStart', 0);
    // After the routes' own onClose work (Fastify runs onClose hooks in reverse): the last spans are exported.
    app.addHook('onClose', () => tracing.close());

    const open = (request: FastifyRequest): TraceContext => {
      const route = request.routeOptions.url;
      // The route pattern, never the path as sent: paths hold user ids and approval ids.
      const attributes = { [ATTR_HTTP_REQUEST_METHOD]: request.method, ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route }) };
      // `principal` is set by authentication only (src/plugins/auth.ts): the one proof the caller may join a trace.
      const principal: Principal | null = request.principal;
      const authenticated = principal !== null;
      const carrier = !authenticated ? undefined : request.headers.traceparent === undefined ? (request.routeOptions.config.traceCarrier?.(request.body) ?? request.headers) : request.headers;
      const named = authenticated ? request.routeOptions.config.spanName?.(request.body) : undefined;
      const name = named?.name ?? (route === undefined ? request.method : `${request.method} ${route}`);
      const ctx = startServerSpan(name, named === undefined ? attributes : { ...attributes, ...named.attributes }, request.traceStart || now(), carrier);
      request.traceContext = ctx;
      return ctx;
    };

    app.addHook('onRequest', (request, reply, done) => {
      request.traceStart = now();
      // Fastify's onResponse follows finished responses only: a client that hung up mid-call ends its span
      // here, as 499 (nginx's status for it, as the request metrics count it).
      const response = reply.raw;
      response.once('close', () => {
        if (!response.writableEnded) endSpan(request.traceContext ?? open(request), { [ATTR_HTTP_RESPONSE_STATUS_CODE]: 499 }, true);
      });
      done();
    });
    app.addHook('preHandler', (request, _reply, done) => {
      if (request.traceContext === undefined) open(request);
      done();
    });
    // Before the access line (Fastify logs after the onResponse hooks): refusals before preHandler get their span here.
    app.addHook('onResponse', (request, reply, done) => {
      const ctx = request.traceContext ?? open(request);
      endSpan(ctx, { [ATTR_HTTP_RESPONSE_STATUS_CODE]: reply.statusCode }, reply.statusCode >= 500);
      done();
    });
  },
  { name: 'toolgate-tracing' },
);
