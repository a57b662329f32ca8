import type { Next, PolicyContext, ToolCall, ToolResult } from './types.js';
import { isToolError, ToolError } from './tool-error.js';
import { callFailure, markPermanent, successResult } from './tool-result.js';

/**
 * The end of every policy chain: runs the tool's handler and turns whatever happens into a ToolResult.
 * Typed failures keep their errorType; anything else is TOOL_EXCEPTION with its message only (no stack).
 * Not async: a handler that returns a plain value (most in-process tools) is answered without an async
 * frame or a promise to await it; a promise or other thenable is followed as `await` would.
 */
export const invokeTool: Next = (call, ctx) => {
  // A call whose caller already left (or whose script ended) never reaches its handler.
  if (ctx.cancellation.aborted) return Promise.resolve(cancelled(call, ctx));
  let returned: unknown;
  try {
    returned = call.tool.handler(call.arguments, ctx);
    if (!isThenable(returned)) return Promise.resolve(successResult(call, returned));
  } catch (error) {
    return Promise.resolve(failureOf(call, ctx, error));
  }
  const handler = Promise.resolve(returned);
  ctx.script?.track?.(handler);
  return handler.then(
    (value) => settled(call, ctx, value),
    (error: unknown) => failureOf(call, ctx, error),
  );
};

/** successResult, or the failure it throws (an output JSON cannot hold, say) as a ToolResult. */
function settled(call: ToolCall, ctx: PolicyContext, value: unknown): ToolResult {
  try {
    return successResult(call, value);
  } catch (error) {
    return failureOf(call, ctx, error);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

function failureOf(call: ToolCall, ctx: PolicyContext, error: unknown): ToolResult {
  if (isToolError(error)) {
    const result = callFailure(call, error.errorType, error.message, { trace: error.trace, retryAfterMs: error.retryAfterMs });
    return error.permanent ? markPermanent(result) : result;
  }
  if (ctx.cancellation.aborted) return cancelled(call, ctx);
  const message = error instanceof Error ? error.message : String(error);
  return callFailure(call, 'TOOL_EXCEPTION', message || 'tool failed');
}

/** A typed cancellation (a shutdown, the end of a script) says why; any other is the caller giving up. */
function cancelled(call: ToolCall, ctx: PolicyContext): ToolResult {
  const reason: unknown = ctx.cancellation.reason;
  return reason instanceof ToolError ? callFailure(call, reason.errorType, reason.message) : callFailure(call, 'TIMEOUT', 'call was cancelled before it finished');
}
