import type { JsonObject, ToolCall } from '../call/types.js';

// Kept on the call under a symbol (spreads copy it, JSON never shows it): what the model sent before
// bind-arguments wrote server-side values over it.
const MODEL_ARGUMENTS = Symbol('toolgate.modelArguments');

type BoundCall = ToolCall & { readonly [MODEL_ARGUMENTS]?: JsonObject };

/** A copy of `call` with bound arguments, remembering the model's own arguments. */
export function withBoundArguments(call: ToolCall, bound: JsonObject): ToolCall {
  const next: BoundCall = { ...call, arguments: bound, [MODEL_ARGUMENTS]: modelArgumentsOf(call) };
  return next;
}

/**
 * The arguments as the model sent them (before bindings). An approved call is replayed from these through
 * the whole execution path, so validation sees the model-visible shape and bindings are applied again.
 */
export function modelArgumentsOf(call: ToolCall): JsonObject {
  return (call as BoundCall)[MODEL_ARGUMENTS] ?? call.arguments;
}
