// A pre-check of the params of `tools/call`, `resources/read` and `prompts/get` on toolgate's own MCP
// endpoint. The SDK validates a request with its schema before any handler runs and answers a failure as
// -32603 (internal error) with the whole zod issue list as the message, and no handler (so no audit line)
// ever sees it; a client that sent bad params should get -32602 (invalid params) and a sentence instead, and
// the refusal is audited like any other. Arguments are a JSON object on the MCP wire: a JSON string is not
// accepted here (unlike /v1/execute, whose callers relay a model's raw text).
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The methods checked here, and the string param that names what each asks for. */
const NAMED_BY = { 'tools/call': 'name', 'resources/read': 'uri', 'prompts/get': 'name' } as const;
export type CheckedMethod = keyof typeof NAMED_BY;

const isChecked = (method: unknown): method is CheckedMethod => typeof method === 'string' && Object.hasOwn(NAMED_BY, method);

function invalidReason(message: unknown): string | undefined {
  if (!isObject(message) || !isChecked(message.method)) return undefined;
  const { method, params } = message;
  if (!isObject(params)) return `${method} needs params`;
  const named = NAMED_BY[method];
  if (typeof params[named] !== 'string') return `${method} params.${named} must be a string`;
  if (method === 'tools/call' && params.arguments !== undefined && !isObject(params.arguments)) return 'tools/call params.arguments must be a JSON object';
  if (method === 'prompts/get' && params.arguments !== undefined && !(isObject(params.arguments) && Object.values(params.arguments).every((value) => typeof value === 'string'))) {
    return 'prompts/get params.arguments must be an object of strings';
  }
  return undefined;
}

function requestId(message: unknown): string | number | null {
  const id = isObject(message) ? message.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The JSON-RPC error for a body holding a malformed `tools/call`, `resources/read` or `prompts/get`, or
 * undefined when the SDK may take it. A batch with one malformed message is refused whole (id null), as
 * JSON-RPC does for a batch it cannot process.
 */
export function invalidParams(body: unknown): JsonRpcErrorResponse | undefined {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const reason = invalidReason(message);
    if (reason === undefined) continue;
    const id = Array.isArray(body) ? null : requestId(message);
    return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${reason}` } };
  }
  return undefined;
}

/**
 * The checked messages of a body (one message or a batch), each with what it asked for ('' when that is not
 * a string): the calls, reads and gets a refused body refused.
 */
export function checkedMessages(body: unknown): Array<{ method: CheckedMethod; name: string }> {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((message) => {
    if (!isObject(message) || !isChecked(message.method)) return [];
    const named = isObject(message.params) ? message.params[NAMED_BY[message.method]] : undefined;
    return [{ method: message.method, name: typeof named === 'string' ? named : '' }];
  });
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
