import { randomUUID } from 'node:crypto';

/** `tool_step_<step>_<index>` inside a model turn, a unique `call_<random>` for a lone call without a step. */
export function defaultCallId(step: number | undefined, index: number): string {
  return step === undefined ? `call_${randomUUID()}` : `tool_step_${step}_${index}`;
}

/** The call's id: the one its caller sent (a non-empty string), else `fallback`. */
export function callIdOf(request: { readonly callId?: unknown }, fallback: string): string {
  return typeof request.callId === 'string' && request.callId.length > 0 ? request.callId : fallback;
}
