// The types a custom policy module is written against (docs/governance.md#custom-policies). A module in
// TypeScript imports them; one in JavaScript names them in JSDoc:
//   /** @type {import('toolgate/dist/src/policy-authoring.js').PolicyFactory} */
//   export default (options, deps) => async (call, ctx, next) => next(call, ctx);
export type { PolicyFactory } from './pipeline/chain.js';
export type { Policy, PolicyDeps } from './pipeline/types.js';
export type { ErrorType, JsonObject, Next, PolicyContext, ScriptOrigin, Tool, ToolCall, ToolContext, ToolResult } from './call/types.js';
export type { Principal } from './call/principal.js';
