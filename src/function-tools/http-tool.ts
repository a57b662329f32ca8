import type { Agent } from 'undici';
import type { HttpFunctionEntry } from '../config/types.js';
import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { JsonObject, Tool, ToolContext } from '../call/types.js';
import { readBodyCapped, ResponseTooLargeError } from '../egress/http-client.js';
import { upstreamStatusError } from '../execution/upstream-status.js';
import { clientSpan, httpClientAttributes, isTracing } from '../observability/tracing.js';
import { ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';

const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const ERROR_SNIPPET_CHARS = 500;

function buildUrl(entry: HttpFunctionEntry, args: JsonObject): URL {
  const url = new URL(entry.http.url);
  if (entry.http.method === 'GET' || entry.http.method === 'DELETE') {
    for (const [key, value] of Object.entries(args)) {
      url.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
  }
  return url;
}

/**
 * An HTTP (webhook) tool declared in config. Only configured headers are sent: the caller's
 * Authorization never reaches the webhook. Loop protection forwards depth + 1.
 */
export function createHttpTool(entry: HttpFunctionEntry, agent: Agent): Tool {
  const hasBody = entry.http.method !== 'GET' && entry.http.method !== 'DELETE';
  const service = `http:${new URL(entry.http.url).host}`;

  const hop = httpClientAttributes(entry.http.method, new URL(entry.http.url));

  function handler(args: JsonObject, ctx: ToolContext): Promise<unknown> {
    if (!isTracing()) return send(args, ctx, undefined);
    // Never the URL with its query: a GET webhook carries the arguments there.
    return clientSpan(entry.http.method, hop, (trace, span) => send(args, ctx, trace, (status) => span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status)));
  }

  async function send(args: JsonObject, ctx: ToolContext, trace: Readonly<Record<string, string>> | undefined, answered?: (status: number) => void): Promise<unknown> {
    const timeout = AbortSignal.timeout(entry.http.timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout]);
    const url = buildUrl(entry, args);
    let response;
    try {
      response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: entry.http.method as 'POST',
        headers: {
          ...entry.http.headers,
          'content-type': 'application/json',
          accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
          'x-toolgate-depth': String(ctx.depth + 1),
          'x-request-id': ctx.requestId,
          ...trace,
        },
        body: hasBody ? JSON.stringify(args) : undefined,
        signal,
      });
    } catch (error) {
      if (timeout.aborted) throw new ToolError('TIMEOUT', `webhook did not answer within ${entry.http.timeoutMs} ms`);
      if (ctx.signal.aborted) throw new ToolError('TIMEOUT', 'call was cancelled');
      throw new ToolError('UPSTREAM_ERROR', `webhook request failed: ${(error as Error).message}`);
    }
    answered?.(response.statusCode);
    let text: string;
    try {
      text = await readBodyCapped(response.body, MAX_RESPONSE_BYTES);
    } catch (error) {
      if (timeout.aborted) throw new ToolError('TIMEOUT', `webhook did not answer within ${entry.http.timeoutMs} ms`);
      // The gateway's size limit, not the webhook's health: docs/security-model.md#breaker-attribution.
      throw new ToolError('UPSTREAM_ERROR', `webhook response failed: ${(error as Error).message}`, { permanent: error instanceof ResponseTooLargeError });
    }
    if (response.statusCode >= 400) throw upstreamStatusError('webhook', response.statusCode, text.slice(0, ERROR_SNIPPET_CHARS), response.headers['retry-after']);
    const contentType = String(response.headers['content-type'] ?? '');
    if (contentType.includes('json') && text.length > 0) {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
    return text;
  }

  return defineTool({
    name: entry.name,
    description: entry.description,
    inputSchema: entry.inputSchema,
    handler,
    source: 'function',
    service,
    readOnly: entry.readOnly,
    destructive: entry.destructive,
    idempotent: entry.idempotent,
    isConcurrencySafe: entry.concurrencySafe ? () => true : undefined,
    aliases: entry.aliases,
    deferLoading: entry.deferLoading,
    searchHint: entry.searchHint,
    maxResultChars: entry.maxResultChars,
    timeoutMs: entry.timeoutMs,
    feature: entry.feature,
  });
}
