import type { ErrorType } from '../types.js';

/**
 * A typed tool-level failure. Executors and policies throw it (or return a failure result);
 * it becomes a ToolResult with `ok: false`, never an HTTP error.
 */
export class ToolError extends Error {
  readonly errorType: ErrorType;
  readonly trace: unknown;
  readonly retryAfterMs: number | undefined;

  constructor(errorType: ErrorType, message: string, options: { trace?: unknown; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ToolError';
    this.errorType = errorType;
    this.trace = options.trace ?? null;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function isToolError(value: unknown): value is ToolError {
  return value instanceof ToolError;
}
