import Type from 'typebox';
import { deriveContext } from '../src/call/call-context.js';
import { Cancellation } from '../src/shared/cancellation.js';
import { afterThisTurn } from '../src/shared/after-this-turn.js';
import { ToolError } from '../src/call/tool-error.js';
import { callFailure } from '../src/call/tool-result.js';
import { compileOptionGlobs } from '../src/patterns/name-globs.js';
import { activeTraceContext, recordDecision } from '../src/observability/tracing.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions, stringMap } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import type { ToolCall, ToolResult } from '../src/call/types.js';
import { deadlineOf } from '../src/call/deadline.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

const noop = (): void => {};

export const TimeoutOptions = Type.Object(
  {
    defaultMs: Type.Integer({ minimum: 1, default: 60_000 }),
    /** Tool name or glob → ms; first match wins and overrides the tool's own `timeoutMs`. */
    tools: stringMap(Type.Integer({ minimum: 1 }), { default: {} }),
  },
  { additionalProperties: false },
);

/**
 * Bounds one attempt: limit = per-glob option, else the tool's `timeoutMs`, else `defaultMs`, capped by the
 * call's deadline (batch `timeoutMs`). The handler gets the attempt's own signal, aborted on timeout or when
 * the caller's signal aborts; the caller's signal is never aborted by a timeout, so the policies outside this
 * one (retry, circuit breaker) can tell "the attempt timed out" from "the caller left". TIMEOUT is answered on
 * time even if the handler ignores its signal, and at once when a shutdown ends the call (the caller's
 * signal aborts with a ToolError, e.g. "gateway shutting down").
 */
export function timeoutPolicy(options: unknown, deps: PolicyDeps): PolicyLayer {
  const { defaultMs, tools } = parsePolicyOptions('timeout', TimeoutOptions, options);
  const clock = deps.clock ?? systemClock;
  const rules = Object.entries(tools).map(([glob, ms]) => ({ matches: compileOptionGlobs(`policies.timeout.tools[${JSON.stringify(glob)}]`, [glob]), ms }));
  // One promise per attempt, settled by whichever comes first: the handler, the timer or a typed abort of the
  // caller. A late result or rejection of an abandoned handler is observed here and dropped, never unhandled.
  const wrap: PolicyLayer['wrap'] = (next, answer) => (call, ctx) => {
    let limitMs = rules.find((rule) => rule.matches(call.name))?.ms ?? call.tool.timeoutMs ?? defaultMs;
    const deadline = deadlineOf(ctx);
    if (deadline !== undefined) limitMs = Math.min(limitMs, deadline - clock.now());
    if (limitMs <= 0) return Promise.resolve(answer(timedOutResult(call, limitMs)));

    // The attempt's own cancellation: its AbortSignal exists only if the handler reads it (src/shared/cancellation.ts).
    const attempt = new Cancellation();
    const begun = clock.now();
    // The timer is set after this turn, outside the call's async context: the span it may record is parented here.
    const traceParent = activeTraceContext();
    return new Promise<ToolResult>((resolve, reject) => {
      let settled = false;
      let started = false;
      let unfollow = noop;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        unfollow();
        return true;
      };
      // Armed once the turn that started the attempt is over (src/shared/after-this-turn.ts), for the time left
      // of the limit: an attempt answered within that turn, as a function tool's usually is, needs no timer.
      afterThisTurn(() => {
        if (settled) return;
        timer = setTimeout(() => {
          if (!finish()) return;
          // Under the call's trace context: the span covers the attempt it ended.
          if (traceParent !== undefined) recordDecision('timeout', 'TIMEOUT', Date.now() - limitMs, traceParent);
          attempt.abort(new ToolError('TIMEOUT', timedOutMessage(call, limitMs)));
          resolve(timedOutResult(call, limitMs));
        }, Math.min(Math.max(0, limitMs - (clock.now() - begun)), MAX_TIMER_MS));
        // Never holds the process open by itself: a pending call is held by whoever waits for it.
        timer.unref();
      });
      // The caller's cancellation reaches the attempt; one with a typed reason (a shutdown) is answered at once.
      unfollow = ctx.cancellation.follow((reason) => {
        attempt.abort(reason);
        if (!(reason instanceof ToolError) || !finish()) return;
        const ended = callFailure(call, reason.errorType, reason.message);
        // Before the attempt started this policy answered the call itself; after, the call was handed on.
        resolve(started ? ended : answer(ended));
      });
      // The caller had already been cancelled before this attempt began: nothing starts, whatever the reason.
      if (settled) return;
      if (ctx.cancellation.aborted) {
        finish();
        resolve(answer(callFailure(call, 'TIMEOUT', 'call was cancelled before it started')));
        return;
      }
      const attemptCtx = deriveContext(ctx, { cancellation: attempt });
      started = true;
      let running: Promise<ToolResult>;
      try {
        running = next(call, attemptCtx);
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
  return { wrap };
}

function timedOutMessage(call: ToolCall, limitMs: number): string {
  return `${call.name} timed out after ${Math.max(0, limitMs)} ms`;
}

function timedOutResult(call: ToolCall, limitMs: number): ToolResult {
  return callFailure(call, 'TIMEOUT', timedOutMessage(call, limitMs));
}
