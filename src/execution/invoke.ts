import type { Next } from '../pipeline/types.js';
import { isToolError } from './tool-error.js';
import { callFailure, successResult } from './tool-result.js';

/**
 * The end of every policy chain: runs the tool's handler and turns whatever happens into a ToolResult.
 * Typed failures keep their errorType; anything else is TOOL_EXCEPTION with its message only (no stack).
 */
export const invokeTool: Next = async (call, ctx) => {
  try {
    const returned = await call.tool.handler(call.arguments, ctx);
    return successResult(call, returned);
  } catch (error) {
    if (isToolError(error)) return callFailure(call, error.errorType, error.message, { trace: error.trace, retryAfterMs: error.retryAfterMs });
    if (ctx.signal.aborted) return callFailure(call, 'TIMEOUT', 'call was cancelled before it finished');
    const message = error instanceof Error ? error.message : String(error);
    return callFailure(call, 'TOOL_EXCEPTION', message || 'tool failed');
  }
};
