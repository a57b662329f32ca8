import Type from 'typebox';
import { outcomeOf } from '../src/audit/events.js';
import { isPermanentFailure } from '../src/call/tool-result.js';
import { ATTR_OUTCOME, ATTR_POLICY, ATTR_RETRY_ATTEMPT, inSpan, isTracing } from '../src/observability/tracing.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { backoffDelay } from '../src/shared/backoff.js';
import type { Next, PolicyContext, PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import type { ErrorType, ToolCall, ToolResult } from '../src/call/types.js';
import { deadlineOf } from '../src/call/deadline.js';

export const RetryOptions = Type.Object(
  {
    /** Total attempts including the first. */
    attempts: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
    baseMs: Type.Integer({ minimum: 0, default: 100 }),
    maxMs: Type.Integer({ minimum: 0, default: 2_000 }),
    /**
     * The longest wait an upstream's Retry-After (a 429 or 503) is honoured for; one asking for more ends the
     * retries and its result, with `retryAfterMs`, goes back to the caller.
     */
    maxRetryAfterMs: Type.Integer({ minimum: 0, maximum: 60_000, default: 5_000 }),
    on: Type.Array(Type.Enum(['UPSTREAM_ERROR', 'TIMEOUT', 'TOOL_EXCEPTION', 'RATE_LIMITED'] as const, { type: 'string' }), {
      default: ['UPSTREAM_ERROR', 'TIMEOUT', 'RATE_LIMITED'],
    }),
  },
  { additionalProperties: false },
);

/** A retry attempt (the second and later) as a span, so the hops it makes nest under it. */
function tracedAttempt(attempt: number, run: () => Promise<ToolResult>): Promise<ToolResult> {
  return inSpan(`policy retry attempt ${attempt}`, { attributes: { [ATTR_POLICY]: 'retry', [ATTR_RETRY_ATTEMPT]: attempt } }, run, (result) => {
    const outcome = outcomeOf(result);
    return { attributes: { [ATTR_OUTCOME]: outcome }, failed: outcome !== 'ok' };
  });
}

/**
 * Retries only tools that are safe to repeat (`readOnly` or `idempotent`), only on transient failures (never
 * a built-in tool's TIMEOUT), with jittered exponential backoff (src/shared/backoff.ts) or after the wait an
 * upstream's Retry-After asked for (up to `maxRetryAfterMs`), a bounded number of attempts, and never past the
 * call's deadline or abort. The rate-limit policy runs outside this one: only an upstream's RATE_LIMITED gets here.
 */
export function retryPolicy(options: unknown, deps: PolicyDeps): PolicyLayer {
  const { attempts, baseMs, maxMs, maxRetryAfterMs, on } = parsePolicyOptions('retry', RetryOptions, options);
  const clock = deps.clock ?? systemClock;
  const backoff = { initialMs: baseMs, maxMs, factor: 2 };
  const retryable = new Set<ErrorType>(on);
  // A built-in that timed out is not tried again: its time went on tenant-controlled files or commands, and
  // repeating it would only hold the gateway's shared resources (the libuv pool, process slots) longer.
  // A failure marked permanent is the upstream's definite answer (an HTTP 404): repeating it changes nothing.
  const isFinal = (result: ToolResult, call: ToolCall): boolean =>
    result.ok ||
    !result.error ||
    !retryable.has(result.error.errorType) ||
    (result.error.errorType === 'TIMEOUT' && call.tool.source === 'builtin') ||
    isPermanentFailure(result);

  async function retryAfter(first: ToolResult, call: ToolCall, ctx: PolicyContext, next: Next): Promise<ToolResult> {
    let result = first;
    for (let attempt = 1; attempt < attempts; attempt++) {
      if (isFinal(result, call)) break;
      // The upstream said when to come back: not sooner (undici's retry interceptor does the same), and not
      // at all when that is later than the cap.
      const asked = result.retryAfterMs;
      if (asked !== undefined && asked > maxRetryAfterMs) break;
      const delay = asked ?? backoffDelay(attempt - 1, backoff, clock.random);
      const deadline = deadlineOf(ctx);
      if (ctx.signal.aborted || (deadline !== undefined && clock.now() + delay >= deadline)) break;
      await clock.sleep(delay, ctx.signal);
      if (ctx.signal.aborted) break;
      deps.metrics?.decision('retry', 'retried');
      result = await (isTracing() ? tracedAttempt(attempt + 1, () => next(call, ctx)) : next(call, ctx));
    }
    return result;
  }

  // The first attempt without an async frame (this layer runs on every call of a read-only tool); the
  // backoff loop only once a retryable failure came back.
  const wrap: PolicyLayer['wrap'] = (next) => (call, ctx) => {
    let first: Promise<ToolResult>;
    try {
      first = next(call, ctx);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!(call.tool.readOnly || call.tool.idempotent) || attempts === 1) return first;
    return first.then((result) => (isFinal(result, call) ? result : retryAfter(result, call, ctx, next)));
  };
  return { appliesTo: (tool) => tool.readOnly || tool.idempotent === true, wrap };
}
