import type { ErrorType } from './types.js';

/**
 * A typed tool-level failure. Executors and policies throw it (or return a failure result);
 * it becomes a ToolResult with `ok: false`, never an HTTP error.
 */
export class ToolError extends Error {
  readonly errorType: ErrorType;
  readonly trace: unknown;
  readonly retryAfterMs: number | undefined;
  /**
   * The upstream gave a definite answer (an HTTP 404, an egress refusal): repeating the call gives the same
   * one, and it says nothing about the upstream's health — so retry does not repeat it and the circuit
   * breaker does not count it (one tenant's bad calls must not open a shared circuit).
   */
  readonly permanent: boolean;

  constructor(errorType: ErrorType, message: string, options: { trace?: unknown; retryAfterMs?: number; cause?: unknown; permanent?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ToolError';
    this.errorType = errorType;
    this.trace = options.trace ?? null;
    this.retryAfterMs = options.retryAfterMs;
    this.permanent = options.permanent ?? false;
  }
}

export function isToolError(value: unknown): value is ToolError {
  return value instanceof ToolError;
}

/**
 * Whether a call's own signal was aborted by its client giving up on it (hung up, sent
 * notifications/cancelled, ended its MCP session or its batch request), not for a typed reason (its batch
 * deadline, a shutdown: both answer TIMEOUT): such a call is counted and audited as `cancelled` (its
 * errorType stays TIMEOUT), so dashboards and alerts on TIMEOUT see only calls the gateway gave up on.
 */
export function cancelledByCaller(signal: { readonly aborted: boolean; readonly reason: unknown }): boolean {
  return signal.aborted && !isToolError(signal.reason);
}
