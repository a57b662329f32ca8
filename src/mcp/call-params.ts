// A pre-check of `tools/call` params on toolgate's own MCP endpoint. The SDK validates a request with its
// schema before any handler runs and answers a failure as -32603 (internal error) with the whole zod
// issue list as the message; a client that sent bad params should get -32602 (invalid params) and a
// sentence instead. Arguments are a JSON object on the MCP wire: a JSON string is not accepted here
// (unlike /v1/execute, whose callers relay a model's raw text).
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalidReason(message: unknown): string | undefined {
  if (!isObject(message) || message.method !== 'tools/call') return undefined;
  const params = message.params;
  if (!isObject(params)) return 'tools/call needs params';
  if (typeof params.name !== 'string') return 'tools/call params.name must be a string';
  if (params.arguments !== undefined && !isObject(params.arguments)) return 'tools/call params.arguments must be a JSON object';
  return undefined;
}

function requestId(message: unknown): string | number | null {
  const id = isObject(message) ? message.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The JSON-RPC error for a body holding a malformed `tools/call`, or undefined when the SDK may take it.
 * A batch with one malformed call is refused whole (id null), as JSON-RPC does for a batch it cannot process.
 */
export function invalidToolCall(body: unknown): JsonRpcErrorResponse | undefined {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const reason = invalidReason(message);
    if (reason === undefined) continue;
    const id = Array.isArray(body) ? null : requestId(message);
    return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${reason}` } };
  }
  return undefined;
}

/** The `tools/call` messages of a body (one message or a batch) by the name each asked for ('' when none): the calls a refused body refused. */
export function toolCallNames(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages
    .filter((message): message is Record<string, unknown> => isObject(message) && message.method === 'tools/call')
    .map((message) => (isObject(message.params) && typeof message.params.name === 'string' ? message.params.name : ''));
}

/**
 * The W3C trace context an MCP request carries in `params._meta` (`traceparent`, `tracestate`), as the MCP
 * semantic conventions put it; undefined for a batch, a message without it, or non-string values.
 */
export function traceMeta(body: unknown): Record<string, string> | undefined {
  if (!isObject(body) || !isObject(body.params) || !isObject(body.params._meta)) return undefined;
  const { traceparent, tracestate } = body.params._meta;
  if (typeof traceparent !== 'string') return undefined;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}
