// The one jittered exponential backoff: a retried call waits it (policies/retry.ts), and so does a lost
// MCP upstream before it reconnects (src/mcp/client/upstream-client.ts).

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor: number;
}

/**
 * The wait before retry `attempt` (0 for the first): between half and all of the capped exponential delay
 * `min(maxMs, initialMs × factor^attempt)`, so clients that failed together do not come back together, and
 * never more than `maxMs` however many attempts failed.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  // 0 × Infinity (a zero start after a thousand attempts) would be NaN, not 0.
  const capped = options.initialMs === 0 ? 0 : Math.min(options.maxMs, options.initialMs * options.factor ** attempt);
  return Math.round(capped * (0.5 + random() * 0.5));
}
