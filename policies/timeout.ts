import picomatch from 'picomatch';
import { ToolError } from '../src/execution/tool-error.js';
import { callFailure } from '../src/execution/tool-result.js';
import { deadlineOf, systemClock, type PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { Policy } from '../src/pipeline/types.js';
import type { ToolCall, ToolResult } from '../src/types.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

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
 * call's deadline (batch `timeoutMs`). The handler gets the attempt's own signal, aborted on timeout or when
 * the caller's signal aborts; the caller's signal is never aborted by a timeout, so the policies outside this
 * one (retry, circuit breaker) can tell "the attempt timed out" from "the caller left". TIMEOUT is answered on
 * time even if the handler ignores its signal, and at once when a shutdown ends the call (the caller's
 * signal aborts with a ToolError, e.g. "gateway shutting down").
 */
export function timeoutPolicy(options: unknown, deps: PolicyDeps): Policy {
  const { defaultMs, tools } = parsePolicyOptions<{ defaultMs: number; tools: Record<string, number> }>('timeout', timeoutOptionsSchema, options);
  const clock = deps.clock ?? systemClock;
  const rules = Object.entries(tools).map(([glob, ms]) => ({ matches: picomatch(glob, { dot: true }), ms }));
  // One promise per attempt, settled by whichever comes first: the handler, the timer or a typed abort of the
  // caller. A late result or rejection of an abandoned handler is observed here and dropped, never unhandled.
  return (call, ctx, next) => {
    let limitMs = rules.find((rule) => rule.matches(call.name))?.ms ?? call.tool.timeoutMs ?? defaultMs;
    const deadline = deadlineOf(ctx);
    if (deadline !== undefined) limitMs = Math.min(limitMs, deadline - clock.now());
    if (limitMs <= 0) return Promise.resolve(timedOutResult(call, limitMs));

    const caller = ctx.signal;
    // A caller cancelled with a typed reason (a shutdown) before this attempt began: nothing starts.
    if (caller.aborted && caller.reason instanceof ToolError) return Promise.resolve(callFailure(call, caller.reason.errorType, caller.reason.message));
    const attempt = new AbortController();
    return new Promise<ToolResult>((resolve, reject) => {
      let settled = false;
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        caller.removeEventListener('abort', callerAborted);
        return true;
      };
      // The caller's signal is this call's own (one per request or batch call), so this listener is the only
      // one this attempt adds to it, and it goes when the attempt settles.
      function callerAborted(): void {
        const reason: unknown = caller.reason;
        attempt.abort(reason);
        if (reason instanceof ToolError && finish()) resolve(callFailure(call, reason.errorType, reason.message));
      }
      const timer = setTimeout(() => {
        if (!finish()) return;
        attempt.abort(new ToolError('TIMEOUT', timedOutMessage(call, limitMs)));
        resolve(timedOutResult(call, limitMs));
      }, Math.min(limitMs, MAX_TIMER_MS));
      // Never holds the process open by itself: a pending call is held by whoever waits for it.
      timer.unref();
      if (caller.aborted) attempt.abort(caller.reason);
      else caller.addEventListener('abort', callerAborted, { once: true });
      let running: Promise<ToolResult>;
      try {
        running = next(call, { ...ctx, signal: attempt.signal });
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (result) => {
          if (finish()) resolve(result);
        },
        (error: unknown) => {
          if (finish()) reject(error);
        },
      );
    });
  };
}

function timedOutMessage(call: ToolCall, limitMs: number): string {
  return `${call.name} timed out after ${Math.max(0, limitMs)} ms`;
}

function timedOutResult(call: ToolCall, limitMs: number): ToolResult {
  return callFailure(call, 'TIMEOUT', timedOutMessage(call, limitMs));
}
