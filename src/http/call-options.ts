import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallOptions } from '../execution/execute.js';
import type { ToolMode } from '../pipeline/types.js';
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

/** Aborted when the client goes away before the answer is written, so executors stop work nobody will read. */
export function requestSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function callOptionsFor(request: FastifyRequest, callId: string, signal: AbortSignal): CallOptions {
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
