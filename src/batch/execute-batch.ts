import { callIdOf, defaultCallId } from '../call/call-id.js';
import { ToolError } from '../call/tool-error.js';
import { failureResult } from '../call/tool-result.js';
import type { ToolResult } from '../call/types.js';
import { executePrepared, type CallOptions, type CallRequest, type ExecutionScope, executeCall } from '../execution/execute.js';
import { prepareCall } from '../execution/prepare.js';
import type { PolicyMetrics } from '../pipeline/policy-metrics.js';
import { parseArguments } from '../execution/arguments.js';
import { Cancellation } from '../shared/cancellation.js';
import { isCallConcurrencySafe } from '../registry/define-tool.js';
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

/**
 * One model turn (docs/architecture.md#batch) on one config snapshot: each call prepared once
 * (src/execution/prepare.ts) and classified from that, scheduled by src/batch/scheduler.ts, and run through the
 * rest of the one call path. Results come back in input order.
 */
export async function executeBatch(batch: BatchRequest, options: BatchCallOptions, scope: ExecutionScope, metrics?: PolicyMetrics): Promise<ToolResult[]> {
  const step = batch.step ?? 0;
  // Each call prepared once (parsed, resolved, validated): its classification reads it, and so does its run.
  const prepared = batch.calls.map((call, index) => prepareCall(call, callIdOf(call, defaultCallId(step, index)), options.principal.user, options.log, scope));
  return runBatch(batch.calls, {
    // A call that will not run (bad name or arguments) answers at once: classed safe.
    classify: (_call, index) => {
      const ready = prepared[index];
      return ready === undefined || !ready.ok || isCallConcurrencySafe(ready.call.tool, ready.call.arguments);
    },
    parallel: batch.parallel ?? true,
    maxParallel: batch.maxParallel,
    timeoutMs: batch.timeoutMs,
    signal: options.signal,
    onGroup: (size) => metrics?.batchGroup(size),
    run: (call, index, ctx) => {
      const callId = callIdOf(call, defaultCallId(step, index));
      const ready = prepared[index] ?? prepareCall(call, callId, options.principal.user, options.log, scope);
      return executePrepared(ready, { ...options, cancellation: Cancellation.of(ctx.signal), defaultCallId: callId, deadline: ctx.deadline }, scope);
    },
    onTimeout: (call, index, timeoutMs) => {
      const name = typeof call.name === 'string' ? call.name : '';
      return failureResult('TIMEOUT', `${name} timed out after ${timeoutMs} ms`, { callId: callIdOf(call, defaultCallId(step, index)), name, durationMs: timeoutMs });
    },
    // Typed, so the late end of the call counts as a timeout and not as its caller cancelling it.
    timeoutReason: (timeoutMs) => new ToolError('TIMEOUT', `call timed out after ${timeoutMs} ms`),
  });
}
