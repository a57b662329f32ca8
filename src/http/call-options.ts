import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallOptions } from '../execution/execute.js';
import type { ToolMode } from '../call/types.js';
import { Cancellation } from '../shared/cancellation.js';
import type { Drain } from './drain.js';

export function requestMode(request: FastifyRequest): ToolMode {
  return request.headers['x-toolgate-mode'] === 'readonly' ? 'readonly' : 'default';
}

export function requestDepth(request: FastifyRequest): number {
  const raw = request.headers['x-toolgate-depth'];
  const value = typeof raw === 'string' ? Number.parseInt(raw, 10) : 0;
  return Number.isFinite(value) && value >= 0 ? value : 0;
}

// The default call id has one owner, the call contract; re-exported for the routes and the /mcp endpoint.
export { defaultCallId } from '../call/call-id.js';

/**
 * The cancellation of one request's calls: aborted when the client goes away before the answer is written,
 * so executors stop work nobody will read, or when a shutdown ends the calls still running (Drain.cancel).
 * Its AbortSignal exists only if a handler reads it (src/shared/cancellation.ts).
 */
export function requestCancellation(reply: FastifyReply, drain: Pick<Drain, 'track'>): Cancellation {
  const cancellation = new Cancellation();
  const release = drain.track(cancellation);
  const response = reply.raw;
  const gone = (): void => {
    release();
    if (!response.writableFinished) cancellation.abort(new Error('client closed the connection'));
  };
  if (response.closed) gone();
  // A response closes once: `on`, without the once-wrapper `once` makes per request.
  else response.on('close', gone);
  return cancellation;
}

/** `cancellation` may be a signal made elsewhere (the MCP endpoint's): it becomes the call's Cancellation here. */
export function callOptionsFor(request: FastifyRequest, callId: string, cancellation: Cancellation | AbortSignal): CallOptions {
  return {
    principal: request.principal,
    requestId: request.id,
    log: request.log,
    cancellation: cancellation instanceof Cancellation ? cancellation : Cancellation.of(cancellation),
    depth: requestDepth(request),
    mode: requestMode(request),
    defaultCallId: callId,
    trace: request.traceContext,
  };
}
