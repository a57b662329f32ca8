// An example custom policy (config: `policies.custom: [{module: ./examples/policies/pii-guard.mjs, before: approval}]`).
// A custom policy module default-exports a factory `(options, deps) => (call, ctx, next) => Promise<ToolResult>`.
// This one refuses calls whose arguments look like they carry a payment card number or, optionally, an e-mail.
const CARD = /\b(?:\d[ -]?){13,19}\b/;
const EMAIL = /[^\s@"]+@[^\s@"]+\.[A-Za-z]{2,}/;

/** @type {import('../../src/policy-authoring.js').PolicyFactory} (types: docs/governance.md#custom-policies) */
export default function piiGuardPolicy(options = {}) {
  const patterns = [CARD, ...(options.emails ? [EMAIL] : [])];
  return async (call, ctx, next) => {
    const text = JSON.stringify(call.arguments);
    if (!patterns.some((pattern) => pattern.test(text))) return next(call, ctx);
    const error = 'arguments look like they contain personal data (pii-guard)';
    return {
      callId: call.callId,
      name: call.name,
      ok: false,
      output: `TOOL_ERROR: ${JSON.stringify({ errorType: 'PERMISSION_DENIED', error, tool: call.name, callId: call.callId })}`,
      source: call.tool.source,
      durationMs: 0,
      truncated: false,
      trace: null,
      error: { errorType: 'PERMISSION_DENIED', error },
    };
  };
}
