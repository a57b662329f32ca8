// The name and attributes of the server span of one request to toolgate's own MCP endpoint, per the
// OpenTelemetry MCP semantic conventions: `{mcp.method.name} {target}` (target: the tool or prompt name),
// with `mcp.method.name` and `jsonrpc.request.id`, rather than one "POST /mcp" for every method.
import type { Attributes } from '@opentelemetry/api';
import { boundedName } from '../../audit/events.js';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_NETWORK_TRANSPORT,
} from '../../observability/tracing.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The span of one JSON-RPC message (a request or a notification); undefined for a batch or a body that is
 * not a message, which keep the HTTP name. Names the caller sent are cut as audit events cut them.
 */
export function mcpServerSpan(body: unknown): { name: string; attributes: Attributes } | undefined {
  if (!isObject(body) || typeof body.method !== 'string') return undefined;
  const method = boundedName(body.method);
  const attributes: Attributes = { [ATTR_MCP_METHOD_NAME]: method, [ATTR_NETWORK_TRANSPORT]: 'tcp' };
  if (typeof body.id === 'string' || typeof body.id === 'number') attributes[ATTR_JSONRPC_REQUEST_ID] = String(body.id);
  const target = isObject(body.params) && typeof body.params.name === 'string' ? boundedName(body.params.name) : undefined;
  if (target === undefined) return { name: method, attributes };
  if (method === 'tools/call') return { name: `${method} ${target}`, attributes: { ...attributes, [ATTR_GEN_AI_TOOL_NAME]: target, [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool' } };
  if (method === 'prompts/get') return { name: `${method} ${target}`, attributes: { ...attributes, [ATTR_GEN_AI_PROMPT_NAME]: target } };
  return { name: method, attributes };
}
