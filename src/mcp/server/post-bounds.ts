// The bounds on what one POST to /mcp may make the gateway do (docs/security-model.md#mcp-endpoint-bounds):
// a JSON-RPC batch holds at most `mcpServer.maxBatchMessages` messages, and the messages that reach other
// replicas over the bus — `notifications/cancelled` and answers to relayed requests — are counted per session
// against `mcpServer.signalRate` on every replica together (one store step per POST, whatever it carries).
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, isSpecType, ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { DomainError } from '../../errors.js';
import type { StateStore } from '../../store/types.js';
import type { JsonRpcErrorResponse } from './request-params.js';

/**
 * The JSON-RPC error for a batch larger than `max`, or undefined. JSON-RPC 2.0 answers a batch it cannot
 * take as a whole with one Invalid Request error (id null), which is also what the MCP SDK sends past its
 * own cap; nothing of the batch is handled.
 */
export function oversizedBatch(body: unknown, max: number): JsonRpcErrorResponse | undefined {
  if (!Array.isArray(body) || body.length <= max) return undefined;
  return {
    jsonrpc: '2.0',
    id: null,
    error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: a batch holds at most ${max} messages (mcpServer.maxBatchMessages); this one holds ${body.length}` },
  };
}

/** How many of the body's messages are cancellations or answers: what a session's signal rate counts. */
export function signalsIn(body: unknown): number {
  let count = 0;
  for (const message of Array.isArray(body) ? body : [body]) {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) || isSpecType.CancelledNotification(message)) count += 1;
  }
  return count;
}

/** A session sent more cancellations and answers than `mcpServer.signalRate` allows: 429 with Retry-After. */
export class SessionSignalsLimited extends DomainError {
  readonly gatewayCode = 'TG_RATE_LIMITED';
  constructor(
    limit: number,
    windowMs: number,
    override readonly retryAfterMs: number,
  ) {
    super(`this MCP session sent more than ${limit} cancellations and answers in ${windowMs} ms (mcpServer.signalRate); none of this request's were taken`);
  }
}

/**
 * Counts `count` signals against the session's window (`key`, a side key of the session, which expires
 * with the window) and throws SessionSignalsLimited when they do not fit; none of them is counted then.
 */
export async function spendSignals(store: StateStore, key: string, rate: { limit: number; windowMs: number }, count: number): Promise<void> {
  if (count === 0) return;
  const hit = await store.hitWindow(key, rate.limit, rate.windowMs, count);
  if (!hit.allowed) throw new SessionSignalsLimited(rate.limit, rate.windowMs, hit.retryAfterMs);
}
