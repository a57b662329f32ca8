import { performance } from 'node:perf_hooks';
import { auditRefusal } from '../audit/call-audit.js';
import type { AuditSink } from '../audit/types.js';
import { callIdOf } from '../call/call-id.js';
import { CallContext } from '../call/call-context.js';
import { cancelledByCaller } from '../call/tool-error.js';
import type { Principal } from '../call/principal.js';
import type { Logger, Next, PolicyContext, ProgressUpdate, ScriptOrigin, Tool, ToolMode, ToolResult } from '../call/types.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { SpanLinkTarget, TraceContext } from '../observability/tracing.js';
import type { TenantView } from '../registry/tenant-view.js';
import type { Cancellation } from '../shared/cancellation.js';
import { prepareCall, type CallRequest, type PreparedCall, type PrepareScope } from './prepare.js';
import { tracedCall } from './traced-call.js';

export type { CallRequest, PreparedCall } from './prepare.js';

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

/** What the call path needs from the current config snapshot. */
export interface ExecutionScope extends PrepareScope {
  chain: Next;
  metrics: GatewayMetrics;
  /** Where refusals before the policy chain are audited (the chain's audit policy records the rest). */
  audit: AuditSink;
}

/**
 * The one call path shared by /v1/execute, the batch endpoint, approvals and the MCP endpoint, one way:
 * prepare (structure, resolve, schema: src/execution/prepare.ts) → policy chain (audit outermost) →
 * executor → result. A call refused before the chain is audited here, through the same one writer of call
 * events (src/audit/call-audit.ts). Never throws for a tool-level problem: every outcome is a ToolResult.
 */
export function executeCall(request: CallRequest, options: CallOptions, scope: ExecutionScope): Promise<ToolResult> {
  // Tracing off: this one check is all it costs.
  if (options.trace === undefined) return prepareAndRun(request, options, scope);
  return traced(options.trace, request.name, options, () => prepareAndRun(request, options, scope));
}

/** The rest of the path for a call prepared already (a batch prepares each call once, to classify it). */
export function executePrepared(prepared: PreparedCall, options: CallOptions, scope: ExecutionScope): Promise<ToolResult> {
  if (options.trace === undefined) return runPrepared(prepared, options, scope, performance.now());
  const name = prepared.ok ? prepared.call.name : prepared.refusal.name;
  return traced(options.trace, name, options, () => runPrepared(prepared, options, scope, performance.now()));
}

function traced(trace: TraceContext, name: unknown, options: CallOptions, run: () => Promise<ToolResult>): Promise<ToolResult> {
  const approval = options.approval === undefined ? undefined : { id: options.approval.id, link: options.traceLink };
  return tracedCall(trace, name, options.principal.tenant, run, approval);
}

function prepareAndRun(request: CallRequest, options: CallOptions, scope: ExecutionScope): Promise<ToolResult> {
  const started = performance.now();
  const prepared = prepareCall(request, callIdOf(request, options.defaultCallId), options.principal.user, options.log, scope);
  return runPrepared(prepared, options, scope, started);
}

async function runPrepared(prepared: PreparedCall, options: CallOptions, scope: ExecutionScope, started: number): Promise<ToolResult> {
  if (!prepared.ok) return refused(prepared, options, scope, started);
  const { principal } = options;
  const { tenant } = scope;
  const ctx = new CallContext(
    principal,
    prepared.call.callId,
    options.requestId,
    options.cancellation,
    options.log,
    options.depth,
    options.mode,
    accessChecker(tenant, principal, options.mode),
    options.approval,
    options.deadline,
    options.onProgress,
    options.script,
    scope.pool,
  );
  const tool = prepared.call.tool;
  return finishCall(await scope.chain(prepared.call, ctx), tool, started, scope, ctx);
}

// Module-level helpers rather than per-call closures: nothing allocated per call for them.
function finishCall(result: ToolResult, tool: Tool | undefined, started: number, scope: ExecutionScope, ctx?: CallContext): ToolResult {
  result.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  scope.metrics.recordCall(scope.tenant.id, tool, result, !result.ok && ctx !== undefined && cancelledByCaller(ctx.cancellation));
  return result;
}

/**
 * Finishes and audits a call refused before the policy chain (it never reaches the audit policy): the name as the caller
 * sent it (bounded) when nothing resolved. An approved call's run is recorded by its approval decision.
 */
function refused(prepared: PreparedCall & { ok: false }, options: CallOptions, scope: ExecutionScope, started: number): Promise<ToolResult> {
  const result = finishCall(prepared.refusal, prepared.tool, started, scope);
  if (options.approval === undefined) {
    const { principal } = options;
    auditRefusal(scope.audit, {
      origin: { requestId: options.requestId, tenant: principal.tenant, user: principal.user },
      result,
      tool: prepared.tool,
      args: prepared.args,
      time: Math.round(performance.timeOrigin + started),
      durationMs: result.durationMs,
      script: options.script,
    });
  }
  return Promise.resolve(result);
}

function accessChecker(tenant: TenantView, principal: Principal, mode: ToolMode): PolicyContext['checkAccess'] {
  return (candidate) => tenant.admits(candidate, principal, mode);
}
