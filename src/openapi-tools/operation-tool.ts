// One imported operation as a function tool. The call goes through the pinned (egress-guarded)
// fetch with the entry's timeout; only the entry's configured headers and the gateway's own are
// sent — the caller's Authorization is never in reach of this code. Redirects are followed only
// within the same origin (and only for GET/HEAD); a redirect elsewhere is an UPSTREAM_ERROR.
import { ResponseTooLargeError } from '../egress/http-client.js';
import { egressRefusalOf, RequestNotSentError, type FetchLike } from '../egress/pinned-fetch.js';
import { ToolError } from '../call/tool-error.js';
import { clientSpan, httpClientAttributes, isTracing, recordCredential } from '../observability/tracing.js';
import { ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { defineTool } from '../registry/define-tool.js';
import type { JsonObject, Tool, ToolContext } from '../call/types.js';
import type { ServiceCredentials } from '../call/upstream-credential.js';
import { buildRequest, type OutgoingRequest } from './build-request.js';
import type { RequestPlan } from './request-plan.js';
import { mapResponse } from './response.js';

const MAX_SAME_ORIGIN_REDIRECTS = 3;

export interface OperationToolSpec {
  name: string;
  description: string;
  inputSchema: JsonObject;
  plan: RequestPlan;
  operationId: string;
  /** `openapi:<entry name>`: the circuit-breaker key. */
  service: string;
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxResultChars?: number;
  deferLoading: boolean;
  searchHint?: string;
  /** The entry's OAuth credentials (`auth`): each call carries the one its principal gets. */
  credentials?: ServiceCredentials;
}

function parseUrl(location: string, base: string): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

function failureOf(error: unknown, timeout: AbortSignal, ctx: ToolContext, timeoutMs: number, trace: JsonObject): ToolError {
  if (error instanceof ToolError) return error.trace === null ? new ToolError(error.errorType, error.message, { trace, permanent: error.permanent, retryAfterMs: error.retryAfterMs }) : error;
  if (timeout.aborted) return new ToolError('TIMEOUT', `API did not answer within ${timeoutMs} ms`, { trace });
  if (ctx.signal.aborted) return new ToolError('TIMEOUT', 'call was cancelled', { trace });
  // Failures the gateway caused (a request it cannot build, an answer past its size limit, its egress policy)
  // are never counted against the API's health: docs/security-model.md#breaker-attribution.
  if (error instanceof ResponseTooLargeError) return new ToolError('UPSTREAM_ERROR', `API answer refused: ${error.message}`, { trace, permanent: true });
  const refusal = egressRefusalOf(error);
  if (refusal) {
    // The caller hears the one wording; why (how the host resolved) is for the log only (docs/security-model.md#egress).
    ctx.log.warn({ reason: refusal.reason }, 'OpenAPI call refused by the egress policy');
    return new ToolError('UPSTREAM_ERROR', refusal.message, { trace, permanent: true });
  }
  const cause = (error as Error).cause as Error | undefined;
  if (cause instanceof RequestNotSentError) return new ToolError('VALIDATION_ERROR', `the arguments do not make a valid HTTP request: ${cause.message}`, { trace });
  return new ToolError('UPSTREAM_ERROR', `API request failed: ${cause?.message ?? (error as Error).message}`, { trace });
}

export function createOperationTool(spec: OperationToolSpec, fetch: FetchLike): Tool {
  const { plan } = spec;
  const method = plan.method.toUpperCase();
  const urlTemplate = `${spec.baseUrl.replace(/\/+$/, '')}${plan.pathTemplate}`;
  const readOnly = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';

  // A client span only while tracing is on (never the URL: path and query carry the arguments).
  function send(request: OutgoingRequest, signal: AbortSignal): Promise<Response> {
    if (!isTracing()) return sendOnce(request, signal);
    return clientSpan(
      method,
      httpClientAttributes(method, new URL(request.url)),
      (trace, span) =>
        sendOnce({ ...request, headers: { ...request.headers, ...trace } }, signal).then((response) => {
          span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.status);
          return response;
        }),
      (response) => response.status >= 500,
    );
  }

  async function sendOnce(request: OutgoingRequest, signal: AbortSignal): Promise<Response> {
    let url = request.url;
    for (let hop = 0; ; hop += 1) {
      const response = await fetch(url, { method: request.method, headers: request.headers, body: request.body, signal });
      if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
      await response.body?.cancel();
      const location = response.headers.get('location');
      const next = location ? parseUrl(location, url) : undefined;
      if (!next || next.origin !== new URL(url).origin || !readOnly || hop >= MAX_SAME_ORIGIN_REDIRECTS) {
        throw new ToolError('UPSTREAM_ERROR', `API answered HTTP ${response.status} with a redirect that is not followed (only up to ${MAX_SAME_ORIGIN_REDIRECTS} same-origin redirects of read-only calls are)`, { permanent: true });
      }
      url = next.href;
    }
  }

  async function handler(args: JsonObject, ctx: ToolContext): Promise<{ output: string; trace: JsonObject }> {
    const started = performance.now();
    const trace: JsonObject = { operationId: spec.operationId, method, url: urlTemplate, status: null, durationMs: 0 };
    const timeout = AbortSignal.timeout(spec.timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout]);
    try {
      const credential = await spec.credentials?.forCall(ctx.principal, signal);
      // Which identity the API saw: a hash prefix in the trace, never the token.
      if (credential) trace.credential = recordCredential(credential);
      const request = buildRequest(spec.baseUrl, plan, args, {
        ...spec.headers,
        ...(credential ? { authorization: credential.authorization } : {}),
        accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
        'x-toolgate-depth': String(ctx.depth + 1),
        'x-request-id': ctx.requestId,
      });
      const response = await send(request, signal);
      trace.status = response.status;
      const output = await mapResponse(response, trace);
      return { output, trace };
    } catch (error) {
      throw failureOf(error, timeout, ctx, spec.timeoutMs, trace);
    } finally {
      trace.durationMs = Math.round((performance.now() - started) * 10) / 10;
    }
  }

  return defineTool({
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema,
    handler,
    source: 'function',
    service: spec.service,
    readOnly,
    destructive: method === 'DELETE',
    idempotent: readOnly || method === 'PUT' || method === 'DELETE',
    ...(readOnly ? { isConcurrencySafe: () => true } : {}),
    maxResultChars: spec.maxResultChars,
    deferLoading: spec.deferLoading,
    searchHint: spec.searchHint,
  });
}
