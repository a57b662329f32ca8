import picomatch from 'picomatch';
import { LazyAbort } from '../src/execution/lazy-abort.js';
import { ToolError } from '../src/execution/tool-error.js';
import { callFailure } from '../src/execution/tool-result.js';
import { deadlineOf, systemClock, type PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { Policy, PolicyContext } from '../src/pipeline/types.js';
import type { ToolResult } from '../src/types.js';

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
 * call's deadline (batch `timeoutMs`). The handler gets a signal that aborts on timeout or when the
 * caller's signal aborts; TIMEOUT is answered on time even if the handler ignores its signal.
 */
export function timeoutPolicy(options: unknown, deps: PolicyDeps): Policy {
  const { defaultMs, tools } = parsePolicyOptions<{ defaultMs: number; tools: Record<string, number> }>('timeout', timeoutOptionsSchema, options);
  const clock = deps.clock ?? systemClock;
  const rules = Object.entries(tools).map(([glob, ms]) => ({ matches: picomatch(glob, { dot: true }), ms }));
  return async (call, ctx, next) => {
    let limitMs = rules.find((rule) => rule.matches(call.name))?.ms ?? call.tool.timeoutMs ?? defaultMs;
    const deadline = deadlineOf(ctx);
    if (deadline !== undefined) limitMs = Math.min(limitMs, deadline - clock.now());
    const timedOut = (): ToolResult => callFailure(call, 'TIMEOUT', `${call.name} timed out after ${Math.max(0, limitMs)} ms`);
    if (limitMs <= 0) return timedOut();

    // Lazy: most handlers never read their signal, and an AbortController per call showed on the hot path.
    const abort = new LazyAbort(() => ctx.signal);
    const attempt = Object.create(ctx, { signal: { get: () => abort.signal, enumerable: true } }) as PolicyContext;
    let timer: NodeJS.Timeout | undefined;
    const expiry = new Promise<ToolResult>((resolve) => {
      timer = setTimeout(() => {
        abort.abort(new ToolError('TIMEOUT', `${call.name} timed out`));
        resolve(timedOut());
      }, Math.min(limitMs, MAX_TIMER_MS));
    });
    try {
      // race() also observes a late rejection of the abandoned handler, so it is never unhandled.
      return await Promise.race([next(call, attempt), expiry]);
    } finally {
      clearTimeout(timer);
      abort.dispose();
    }
  };
}
