import picomatch from 'picomatch';
import { CallContext, isPlainCallContext } from '../src/execution/call-context.js';
import { LazyAbort } from '../src/execution/lazy-abort.js';
import { ToolError } from '../src/execution/tool-error.js';
import { callFailure } from '../src/execution/tool-result.js';
import { DeadlineQueue } from '../src/pipeline/deadline-queue.js';
import { deadlineOf, systemClock, type PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { DeadlineAware } from '../src/pipeline/deps.js';
import type { Policy, PolicyContext } from '../src/pipeline/types.js';
import type { ToolCall, ToolResult } from '../src/types.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The call's context with the attempt's own signal. A flat copy, not `Object.create(ctx)`: a fresh
 * per-call object used as a prototype gets a map of its own, which turned every later property access
 * on contexts megamorphic (the layer cost ~45 µs per request under load). Fields beyond the known ones
 * (set by a custom policy or caller) are copied too.
 */
function attemptContext(ctx: PolicyContext, abort: LazyAbort): PolicyContext {
  // The common case: the context executeCall made, re-created with the attempt's abort source.
  if (isPlainCallContext(ctx)) return ctx.withAbort(abort);
  const attempt: PolicyContext & DeadlineAware = {
    principal: ctx.principal,
    callId: ctx.callId,
    requestId: ctx.requestId,
    get signal(): AbortSignal {
      return abort.signal;
    },
    onAbort: (listener) => abort.onAbort(listener),
    log: ctx.log,
    depth: ctx.depth,
    mode: ctx.mode,
    checkAccess: ctx.checkAccess,
    policyOptions: ctx.policyOptions,
    approval: ctx.approval,
    deadline: (ctx as DeadlineAware).deadline,
  };
  for (const key in ctx) {
    if (!(key in attempt)) (attempt as unknown as Record<string, unknown>)[key] = (ctx as unknown as Record<string, unknown>)[key];
  }
  return attempt;
}

export const timeoutOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    defaultMs: { type: 'integer', minimum: 1, default: 60_000 },
    /** Tool name or glob → ms; first match wins and overrides the tool's own `timeoutMs`. */
    tools: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 }, default: {} },
  },
};

/**
 * Bounds one attempt: limit = per-glob option, else the tool's `timeoutMs`, else `defaultMs`, capped by the
 * call's deadline (batch `timeoutMs`). The handler gets a signal that aborts on timeout or when the
 * caller's signal aborts; TIMEOUT is answered on time even if the handler ignores its signal, and at
 * once when a shutdown ends the attempt early (its message, e.g. "gateway shutting down").
 */
export function timeoutPolicy(options: unknown, deps: PolicyDeps): Policy {
  const { defaultMs, tools } = parsePolicyOptions<{ defaultMs: number; tools: Record<string, number> }>('timeout', timeoutOptionsSchema, options);
  const clock = deps.clock ?? systemClock;
  const rules = Object.entries(tools).map(([glob, ms]) => ({ matches: picomatch(glob, { dot: true }), ms }));
  // Shared through deps so a shutdown can end every running attempt at once (DeadlineQueue.expireAll).
  const deadlines = deps.deadlines ?? new DeadlineQueue();
  // Not async, and no Promise.race: one promise per attempt, settled by whichever comes first (this was the
  // costliest layer of the chain under load). Only the first settle counts; a late result or rejection of an
  // abandoned handler is observed here and dropped, so it is never unhandled.
  return (call, ctx, next) => {
    let limitMs = rules.find((rule) => rule.matches(call.name))?.ms ?? call.tool.timeoutMs ?? defaultMs;
    const deadline = deadlineOf(ctx);
    if (deadline !== undefined) limitMs = Math.min(limitMs, deadline - clock.now());
    if (limitMs <= 0) return Promise.resolve(timedOutResult(call, limitMs));

    // Lazy: most handlers never read their signal, and an AbortController per call showed on the hot path.
    // The caller's LazyAbort is followed through a callback (no AbortSignal made for it); other contexts by their signal.
    const callerAbort = ctx instanceof CallContext ? ctx.abortSource : undefined;
    // A caller cancelled with a typed reason (a shutdown) before this attempt began: nothing starts.
    if (callerAbort ? callerAbort.aborted : ctx.signal.aborted) {
      const reason: unknown = ctx.signal.reason;
      if (reason instanceof ToolError) return Promise.resolve(callFailure(call, reason.errorType, reason.message));
    }
    const abort = new LazyAbort(callerAbort instanceof LazyAbort ? callerAbort : () => ctx.signal);
    const attempt = attemptContext(ctx, abort);
    return new Promise<ToolResult>((resolve, reject) => {
      let settled = false;
      // Fired early (with a ToolError) when a shutdown ends every running attempt.
      const timer = deadlines.schedule(Math.min(limitMs, MAX_TIMER_MS), (early) => {
        if (settled) return;
        settled = true;
        const ended = early instanceof ToolError ? early : undefined;
        abort.abort(ended ?? new ToolError('TIMEOUT', `${call.name} timed out`));
        abort.dispose();
        resolve(ended ? callFailure(call, ended.errorType, ended.message) : timedOutResult(call, limitMs));
      });
      let running: Promise<ToolResult>;
      try {
        running = next(call, attempt);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (result) => {
          if (settled) return;
          settled = true;
          timer.cancel();
          abort.dispose();
          resolve(result);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          timer.cancel();
          abort.dispose();
          reject(error);
        },
      );
    });
  };
}

function timedOutResult(call: ToolCall, limitMs: number): ToolResult {
  return callFailure(call, 'TIMEOUT', `${call.name} timed out after ${Math.max(0, limitMs)} ms`);
}
