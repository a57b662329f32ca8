import type { PolicyContext, PolicyLayer } from './types.js';
import type { ToolCall, ToolResult } from '../call/types.js';

/** A synchronous check: a ToolResult to answer the call with, or undefined to hand it on unchanged. */
export type GateCheck = (call: ToolCall, ctx: PolicyContext) => ToolResult | undefined;

/**
 * A policy that only answers or hands on, with nothing around the call (access, max-depth): it adds no
 * async frame or promise of its own to a call it lets through.
 */
export function gate(check: GateCheck): PolicyLayer {
  return {
    wrap: (next, answer) => (call, ctx) => {
      let refused: ToolResult | undefined;
      try {
        refused = check(call, ctx);
      } catch (error) {
        return Promise.reject(error);
      }
      return refused ? Promise.resolve(answer(refused)) : next(call, ctx);
    },
  };
}
