import type { Catalog } from '../registry/catalog.js';
import type { Pool } from '../registry/pool.js';
import { resolveToolName } from '../registry/resolve.js';
import { withoutNullOptionals } from '../registry/strict-schema.js';
import type { TenantView } from '../registry/tenant-view.js';
import { userNamespace, userToolPrefix } from '../registry/user-names.js';
import { STORE_RETRY_AFTER_MS } from '../store/unavailable.js';
import { failureResult } from '../call/tool-result.js';
import type { JsonObject, Logger, Tool, ToolCall, ToolResult } from '../call/types.js';
import { parseArguments } from './arguments.js';
import type { SchemaCheck } from './schema-validator.js';

/** One call as the HTTP and MCP layers hand it over (not yet trusted). */
export interface CallRequest {
  name: unknown;
  arguments?: unknown;
  callId?: string;
}

/** What preparing a call reads from the config snapshot the call started on. */
export interface PrepareScope {
  catalog: Catalog;
  tenant: TenantView;
  pool: Pool;
  validatorFor: (schema: Readonly<Record<string, unknown>>) => ((args: Record<string, unknown>) => SchemaCheck) | undefined;
  /** Set while the store cannot list the caller's own MCP servers: the pool holds none of their tools. */
  userToolsUnavailable?: boolean;
}

/**
 * A call ready for the chain, or the answer that refuses it before the chain. A refusal keeps what was
 * known by then (the resolved tool, the parsed arguments) for its audit event.
 */
export type PreparedCall =
  | { readonly ok: true; readonly call: ToolCall }
  | { readonly ok: false; readonly refusal: ToolResult; readonly tool?: Tool; readonly args?: JsonObject };

const USER_TOOLS_UNAVAILABLE = 'your own MCP servers cannot be looked up while the state store is unavailable; the call did not run; retry later';
const DEFERRED_HINT = ' — this tool was listed without its schema: call tool_search first to load it';

/**
 * The stage before the chain, in one place for every caller (a lone call, each call of a batch): structure
 * (name, arguments as a JSON object without prototype keys) → resolve in the caller's pool (aliases, the
 * caller's own servers) → the tool's structural check → its input schema. Pure: nothing is audited or
 * counted here.
 */
export function prepareCall(request: CallRequest, callId: string, user: string, log: Logger, scope: PrepareScope): PreparedCall {
  const name = typeof request.name === 'string' ? request.name : '';
  if (name.trim().length === 0) return refuse(failureResult('VALIDATION_ERROR', 'tool name is required', { callId, name }));
  const parsed = parseArguments(name, request.arguments);
  if (!parsed.ok) return refuse(failureResult('VALIDATION_ERROR', parsed.message, { callId, name }));
  const args = parsed.args;

  const resolution = resolveToolName(name, scope.pool, scope.catalog, userNamespace(user), scope.tenant.reaches);
  if (!resolution.ok) {
    const failure =
      scope.userToolsUnavailable && name.startsWith(userToolPrefix(user))
        ? failureResult('UPSTREAM_ERROR', USER_TOOLS_UNAVAILABLE, { callId, name, retryAfterMs: STORE_RETRY_AFTER_MS })
        : failureResult(resolution.errorType, resolution.message, { callId, name });
    return refuse(failure, undefined, args);
  }
  const { tool, resolvedFrom } = resolution;

  const structural = tool.checkStructure?.(args);
  if (structural) return refuse(invalidCall(structural, callId, tool, resolvedFrom), tool, args);
  const schema = scope.pool.schemaOf(tool);
  const validate = scope.validatorFor(schema);
  if (validate === undefined) {
    log.warn({ tool: tool.name }, 'tool input schema does not compile; schema validation skipped');
    return ready(callId, tool, args, resolvedFrom);
  }
  const check = validate(args);
  if (check.ok) return ready(callId, tool, args, resolvedFrom);
  // Listed in OpenAI strict mode, an optional argument arrives as null: absent, for a schema without null.
  const relaxed = withoutNullOptionals(schema, args);
  if (relaxed !== args && validate(relaxed).ok) return ready(callId, tool, relaxed, resolvedFrom);
  const message = `${tool.name} arguments are invalid: ${check.message}${scope.pool.isDeferred(tool) ? DEFERRED_HINT : ''}`;
  return refuse(invalidCall(message, callId, tool, resolvedFrom), tool, args);
}

function ready(callId: string, tool: Tool, args: JsonObject, resolvedFrom: string | undefined): PreparedCall {
  return { ok: true, call: { callId, tool, name: tool.name, arguments: args, resolvedFrom } };
}

function refuse(refusal: ToolResult, tool?: Tool, args?: JsonObject): PreparedCall {
  return { ok: false, refusal, tool, args };
}

function invalidCall(message: string, callId: string, tool: Tool, resolvedFrom: string | undefined): ToolResult {
  return failureResult('VALIDATION_ERROR', message, { callId, name: tool.name, source: tool.source, resolvedFrom });
}
