import { isDefiniteClientError } from '../egress/http-client.js';
import { ToolError } from '../call/tool-error.js';

/** The longest wait an upstream's Retry-After may ask for and still be passed on: a day. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * An HTTP `Retry-After` value (delay-seconds or an HTTP-date) in milliseconds from `now`, or undefined when it
 * is absent or unreadable. Bounded: a date in the past is 0, anything beyond a day is a day.
 */
export function retryAfterMs(value: string | readonly string[] | null | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d{1,10}$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (!Number.isFinite(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * The failure an HTTP upstream's error status becomes. 429 is the upstream's rate limit (RATE_LIMITED), and
 * its Retry-After, like a 503's, is kept as the result's `retryAfterMs` for the retry policy and the caller.
 * A definite client error is permanent (not retried, not counted against the upstream's health).
 */
export function upstreamStatusError(what: string, status: number, detail: string, retryAfter: string | readonly string[] | null | undefined, trace?: unknown): ToolError {
  const wait = status === 429 || status === 503 ? retryAfterMs(retryAfter) : undefined;
  const after = wait === undefined ? '' : ` (retry after ${Math.ceil(wait / 1000)} s)`;
  const message = `${what} answered HTTP ${status}${after}${detail ? `: ${detail}` : ''}`;
  if (status === 429) return new ToolError('RATE_LIMITED', message, { trace, retryAfterMs: wait ?? 1000 });
  return new ToolError('UPSTREAM_ERROR', message, { trace, retryAfterMs: wait, permanent: isDefiniteClientError(status) });
}
