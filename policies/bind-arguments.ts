import Type from 'typebox';
import { withBoundArguments } from '../src/bindings/model-arguments.js';
import { applyBindings, resolveBindings } from '../src/bindings/templates.js';
import { callFailure } from '../src/call/tool-result.js';
import { compileBindingRules } from '../src/bindings/rules.js';
import { parsePolicyOptions, stringMap } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import type { JsonObject } from '../src/call/types.js';

export const BindArgumentsOptions = Type.Object(
  {
    // Tool name or glob → argument templates. The chain builder fills this from `tenants.<t>.bindings`.
    bindings: stringMap(Type.Unsafe<JsonObject>({ type: 'object' }), { default: {} }),
  },
  { additionalProperties: false },
);

/**
 * Server-side arguments (docs/security-model.md): the tool's own `bindings` merged with the tenant's (tenant wins per
 * top-level key), expanded for the caller's principal, then written over the model's arguments. Runs
 * after access (a denied call binds nothing) and before approval (the approver sees the bound call).
 * A template whose claim is missing fails the call closed; it never drops the filter. The rules are the
 * tenant's, compiled once with its view (`deps.bindings`, src/bindings/rules.ts); without them (a chain
 * built on its own) they are compiled from the options.
 */
export function bindArgumentsPolicy(options: unknown, deps: PolicyDeps): PolicyLayer {
  const { bindings } = parsePolicyOptions('bind-arguments', BindArgumentsOptions, options);
  const rules = deps.bindings ?? compileBindingRules(bindings);
  const wrap: PolicyLayer['wrap'] = (next, answer) => async (call, ctx) => {
    const template = rules.templateFor(call.tool);
    if (Object.keys(template).length === 0) return next(call, ctx);
    const bound = resolveBindings(template, ctx.principal);
    if (!bound.ok) return answer(callFailure(call, 'PERMISSION_DENIED', `server-side binding failed: ${bound.reason}`));
    return next(withBoundArguments(call, applyBindings(call.arguments, bound.value)), ctx);
  };
  return { appliesTo: rules.appliesTo, wrap };
}
