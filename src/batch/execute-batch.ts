import { parseArguments } from '../execution/arguments.js';
import { executeCall, type CallOptions, type CallRequest, type ExecutionScope } from '../execution/execute.js';
import { Cancellation } from '../shared/cancellation.js';
import { ToolError } from '../call/tool-error.js';
import { failureResult } from '../call/tool-result.js';
import type { PolicyMetrics } from '../pipeline/metrics.js';
import { isCallConcurrencySafe } from '../registry/define-tool.js';
import { resolveToolName } from '../registry/resolve.js';
import { userNamespace } from '../registry/user-names.js';
import type { ToolResult } from '../call/types.js';
import { runBatch } from './scheduler.js';

export interface BatchRequest {
  calls: CallRequest[];
  step?: number;
  parallel?: boolean;
  maxParallel?: number;
  timeoutMs?: number;
}

/**
 * What every call of a batch shares; `defaultCallId` and `deadline` are set per call. A batch runs under one
 * plain signal: each call gets its own child of it from the scheduler.
 */
export type BatchCallOptions = Omit<CallOptions, 'defaultCallId' | 'deadline' | 'cancellation'> & { signal: AbortSignal };

const callIdOf = (call: CallRequest, step: number, index: number): string =>
  typeof call.callId === 'string' && call.callId.length > 0 ? call.callId : `tool_step_${step}_${index}`;

/**
 * One model turn (docs/architecture.md#batch) on one config snapshot: each call classified from its parsed arguments
 * (a call that will not run — bad name or arguments — answers at once and is classed safe), scheduled by
 * src/batch/scheduler.ts, and run through the one execution path. Results come back in input order.
 */
export async function executeBatch(batch: BatchRequest, options: BatchCallOptions, scope: ExecutionScope, metrics?: PolicyMetrics): Promise<ToolResult[]> {
  const step = batch.step ?? 0;
  const users = userNamespace(options.principal.user);
  const classify = (call: CallRequest): boolean => {
    if (typeof call.name !== 'string') return true;
    const parsed = parseArguments(call.name, call.arguments);
    const resolution = resolveToolName(call.name, scope.pool, scope.catalog, users, scope.tenant.reaches);
    return !parsed.ok || !resolution.ok || isCallConcurrencySafe(resolution.tool, parsed.args);
  };
  return runBatch(batch.calls, {
    classify,
    parallel: batch.parallel ?? true,
    maxParallel: batch.maxParallel,
    timeoutMs: batch.timeoutMs,
    signal: options.signal,
    onGroup: (size) => metrics?.batchGroup(size),
    run: (call, index, ctx) =>
      executeCall(call, { ...options, cancellation: Cancellation.of(ctx.signal), defaultCallId: callIdOf(call, step, index), deadline: ctx.deadline }, scope),
    onTimeout: (call, index, timeoutMs) => {
      const name = typeof call.name === 'string' ? call.name : '';
      const result = failureResult('TIMEOUT', `${name} timed out after ${timeoutMs} ms`, { callId: callIdOf(call, step, index), name });
      return { ...result, durationMs: timeoutMs };
    },
    // Typed, so the late end of the call counts as a timeout and not as its caller cancelling it.
    timeoutReason: (timeoutMs) => new ToolError('TIMEOUT', `call timed out after ${timeoutMs} ms`),
  });
}
