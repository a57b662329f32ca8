import { performance } from 'node:perf_hooks';
import { argumentsHash, auditCall } from '../audit/events.js';
import type { AuditSink } from '../audit/types.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { SpanLinkTarget, TraceContext } from '../observability/tracing.js';
import type { Catalog } from '../registry/catalog.js';
import type { Pool } from '../registry/pool.js';
import { resolveToolName } from '../registry/resolve.js';
import { withoutNullOptionals } from '../registry/strict-schema.js';
import type { TenantView } from '../registry/tenant-view.js';
import { userNamespace, userToolPrefix } from '../registry/user-names.js';
import { STORE_RETRY_AFTER_MS } from '../store/unavailable.js';
import type { JsonObject, Logger, Next, PolicyContext, ProgressUpdate, ScriptOrigin, Tool, ToolMode, ToolResult } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { parseArguments } from './arguments.js';
import { CallContext } from '../call/call-context.js';
import type { Cancellation } from '../shared/cancellation.js';
import type { SchemaCheck } from './schema-validator.js';
import { cancelledByCaller } from '../call/tool-error.js';
import { tracedCall } from './traced-call.js';
import { failureResult } from '../call/tool-result.js';

/** One call as the HTTP and MCP layers hand it over (not yet trusted). */
export interface CallRequest {
  name: unknown;
  arguments?: unknown;
  callId?: string;
}

export interface CallOptions {
  principal: Principal;
  requestId: string;
  log: Logger;
  /** The call's own cancellation (client gone, batch, shutdown); never shared with another call. */
  cancellation: Cancellation;
  depth: number;
  mode: ToolMode;
  /** The id used when the request has none (`tool_step_<step>_<index>` or `call_<random>`). */
  defaultCallId: string;
  approval?: PolicyContext['approval'];
  /** Per-call deadline (epoch ms) from a batch `timeoutMs`; timeout and retry policies never run past it. */
  deadline?: number;
  /** The request's span while tracing is on: the call's `execute_tool` span goes under it. Undefined when off. */
  trace?: TraceContext;
  /** A span the call's span links to: for an approved run, the call that asked for the approval. */
  traceLink?: SpanLinkTarget;
  /** Where the call's progress reports go (an MCP client that sent a `progressToken`). */
  onProgress?: (update: ProgressUpdate) => void;
  /** Set for the calls a code-mode script makes (docs/code-mode.md). */
  script?: ScriptOrigin;
}

/** What the execution path needs from the current config snapshot. */
export interface ExecutionScope {
  catalog: Catalog;
  tenant: TenantView;
  pool: Pool;
  chain: Next;
  validatorFor: (schema: Readonly<Record<string, unknown>>) => ((args: Record<string, unknown>) => SchemaCheck) | undefined;
  metrics: GatewayMetrics;
  /** Where refusals before the policy chain are audited (the chain's audit policy records the rest). */
  audit: AuditSink;
  /** Set while the store cannot list the caller's own MCP servers: the pool holds none of their tools. */
  userToolsUnavailable?: boolean;
}

const USER_TOOLS_UNAVAILABLE = 'your own MCP servers cannot be looked up while the state store is unavailable; the call did not run; retry later';
const DEFERRED_HINT = ' — this tool was listed without its schema: call tool_search first to load it';

/**
 * The one execution path shared by /v1/execute, the batch endpoint, approvals and the MCP endpoint:
 * structure (name, arguments, schema) → resolve → policy chain → executor. Never throws for a
 * tool-level problem: every outcome is a ToolResult.
 */
export function executeCall(request: CallRequest, options: CallOptions, scope: ExecutionScope): Promise<ToolResult> {
  // Tracing off: this one check is all it costs.
  if (options.trace === undefined) return runCall(request, options, scope);
  const approval = options.approval === undefined ? undefined : { id: options.approval.id, link: options.traceLink };
  return tracedCall(options.trace, request.name, options.principal.tenant, () => runCall(request, options, scope), approval);
}

async function runCall(request: CallRequest, options: CallOptions, scope: ExecutionScope): Promise<ToolResult> {
  const started = performance.now();
  const callId = typeof request.callId === 'string' && request.callId.length > 0 ? request.callId : options.defaultCallId;
  const name = typeof request.name === 'string' ? request.name : '';

  if (name.trim().length === 0) return refused(failureResult('VALIDATION_ERROR', 'tool name is required', { callId, name }), { options, scope, started });
  const parsed = parseArguments(name, request.arguments);
  if (!parsed.ok) return refused(failureResult('VALIDATION_ERROR', parsed.message, { callId, name }), { options, scope, started });

  const { principal } = options;
  const resolution = resolveToolName(name, scope.pool, scope.catalog, userNamespace(principal.user), scope.tenant.reaches);
  if (!resolution.ok) {
    const failure =
      scope.userToolsUnavailable && name.startsWith(userToolPrefix(principal.user))
        ? failureResult('UPSTREAM_ERROR', USER_TOOLS_UNAVAILABLE, { callId, name, retryAfterMs: STORE_RETRY_AFTER_MS })
        : failureResult(resolution.errorType, resolution.message, { callId, name });
    return refused(failure, { options, scope, started, args: parsed.args });
  }
  const tool = resolution.tool;

  const structural = tool.checkStructure?.(parsed.args);
  if (structural) return refused(invalidCall(structural, callId, tool, resolution.resolvedFrom), { options, scope, started, tool, args: parsed.args });
  const validate = scope.validatorFor(scope.pool.schemaOf(tool));
  if (validate === undefined) options.log.warn({ tool: tool.name }, 'tool input schema does not compile; schema validation skipped');
  let check = validate?.(parsed.args);
  if (check && !check.ok && validate) {
    // Listed in OpenAI strict mode, an optional argument arrives as null: absent, for a schema without null.
    const relaxed = withoutNullOptionals(scope.pool.schemaOf(tool), parsed.args);
    if (relaxed !== parsed.args) {
      const second = validate(relaxed);
      if (second.ok) [parsed.args, check] = [relaxed, second];
    }
  }
  if (check && !check.ok) {
    const message = `${tool.name} arguments are invalid: ${check.message}${scope.pool.isDeferred(tool) ? DEFERRED_HINT : ''}`;
    return refused(invalidCall(message, callId, tool, resolution.resolvedFrom), { options, scope, started, tool, args: parsed.args });
  }

  const tenant = scope.tenant;
  const ctx = new CallContext(
    principal,
    callId,
    options.requestId,
    options.cancellation,
    options.log,
    options.depth,
    options.mode,
    accessChecker(tenant, principal, options.mode),
    tenant.policyOptions,
    options.approval,
    options.deadline,
    options.onProgress,
    options.script,
    scope.pool,
  );
  const call = { callId, tool, name: tool.name, arguments: parsed.args, resolvedFrom: resolution.resolvedFrom };
  return finishCall(await scope.chain(call, ctx), tool, started, scope, ctx);
}

// Module-level helpers rather than per-call closures: nothing allocated per call for them.
function finishCall(result: ToolResult, tool: Tool | undefined, started: number, scope: ExecutionScope, ctx?: CallContext): ToolResult {
  result.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  scope.metrics.recordCall(scope.tenant.id, tool, result, !result.ok && ctx !== undefined && cancelledByCaller(ctx.cancellation));
  return result;
}

function invalidCall(message: string, callId: string, tool: Tool, resolvedFrom: string | undefined): ToolResult {
  return failureResult('VALIDATION_ERROR', message, { callId, name: tool.name, source: tool.source, resolvedFrom });
}

interface Refusal {
  options: CallOptions;
  scope: ExecutionScope;
  started: number;
  /** The resolved tool, when the refusal came after resolution. */
  tool?: Tool;
  /** The parsed arguments, when they were a JSON object. */
  args?: JsonObject;
}

/**
 * Finishes and audits a call refused before the policy chain (it never reaches the audit policy): the name as the caller
 * sent it (bounded) when nothing resolved. An approved call's run is recorded by its approval decision.
 */
function refused(answer: ToolResult, { options, scope, tool, args, started }: Refusal): ToolResult {
  const result = finishCall(answer, tool, started, scope);
  if (scope.audit.enabled === false || options.approval) return result;
  const { principal } = options;
  auditCall(scope.audit, { requestId: options.requestId, tenant: principal.tenant, user: principal.user }, result, {
    callId: result.callId,
    tool: tool?.name ?? result.name,
    source: tool?.source ?? null,
    argsSha256: args ? argumentsHash(args) : null,
    time: Math.round(performance.timeOrigin + started),
    durationMs: result.durationMs,
    approvalId: null,
  }, options.script);
  return result;
}

function accessChecker(tenant: TenantView, principal: Principal, mode: ToolMode): PolicyContext['checkAccess'] {
  return (candidate) => tenant.admits(candidate, principal, mode);
}
