import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallOptions } from '../execution/execute.js';
import type { ToolMode } from '../pipeline/types.js';
import { LazyAbort } from '../execution/lazy-abort.js';
import { randomId } from './random-id.js';

export function requestMode(request: FastifyRequest): ToolMode {
  return request.headers['x-toolgate-mode'] === 'readonly' ? 'readonly' : 'default';
}

export function requestDepth(request: FastifyRequest): number {
  const raw = request.headers['x-toolgate-depth'];
  const value = typeof raw === 'string' ? Number.parseInt(raw, 10) : 0;
  return Number.isFinite(value) && value >= 0 ? value : 0;
}

/** `tool_step_<step>_<index>` inside a model turn, a unique `call_<random>` for a lone call without a step. */
export function defaultCallId(step: number | undefined, index: number): string {
  return step === undefined ? `call_${randomId(12)}` : `tool_step_${step}_${index}`;
}

/**
 * Aborted when the client goes away before the answer is written, so executors stop work nobody will
 * read, or when `shutdown` (the Drain's `calls`) aborts at the end of the shutdown grace. Lazy: the
 * AbortSignal (about 4 µs to create on Node 20) and its `close` listener exist only if a handler or policy
 * reads it, which most calls never do. A signal first read after the client already left is aborted at once.
 */
export function requestAbort(reply: FastifyReply, shutdown: LazyAbort): LazyAbort {
  const response = reply.raw;
  const source: LazyAbort = new LazyAbort(shutdown, (abort) => {
    const gone = (): void => {
      if (!response.writableFinished) abort(new Error('client closed the connection'));
      // The request is over: let go of the process-wide shutdown source.
      source.dispose();
    };
    if (response.closed) {
      gone();
      return undefined;
    }
    response.once('close', gone);
    return () => response.off('close', gone);
  });
  return source;
}

/** The same as a plain AbortSignal, for callers that combine signals (batch, MCP). */
export function requestSignal(reply: FastifyReply, shutdown: LazyAbort): AbortSignal {
  return requestAbort(reply, shutdown).signal;
}

export function callOptionsFor(request: FastifyRequest, callId: string, signal: AbortSignal | LazyAbort): CallOptions {
  return {
    principal: request.principal,
    requestId: request.id,
    log: request.log,
    signal,
    depth: requestDepth(request),
    mode: requestMode(request),
    defaultCallId: callId,
  };
}
