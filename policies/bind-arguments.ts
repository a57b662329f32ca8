import picomatch from 'picomatch';
import Type from 'typebox';
import { withBoundArguments } from '../src/bindings/model-arguments.js';
import { applyBindings, resolveBindings } from '../src/bindings/resolve.js';
import { callFailure } from '../src/call/tool-result.js';
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
 * A template whose claim is missing fails the call closed; it never drops the filter.
 */
export function bindArgumentsPolicy(options: unknown, _deps: PolicyDeps): PolicyLayer {
  const { bindings } = parsePolicyOptions('bind-arguments', BindArgumentsOptions, options);
  const rules = Object.entries(bindings).map(([glob, template]) => ({ matches: picomatch(glob, { dot: true }), template }));
  const wrap: PolicyLayer['wrap'] = (next, answer) => async (call, ctx) => {
    let template: JsonObject = { ...(call.tool.bindings ?? {}) };
    for (const rule of rules) if (rule.matches(call.name)) template = { ...template, ...rule.template };
    if (Object.keys(template).length === 0) return next(call, ctx);
    const bound = resolveBindings(template, ctx.principal);
    if (!bound.ok) return answer(callFailure(call, 'PERMISSION_DENIED', `server-side binding failed: ${bound.reason}`));
    return next(withBoundArguments(call, applyBindings(call.arguments, bound.value)), ctx);
  };
  return { appliesTo: (tool) => Object.keys(tool.bindings ?? {}).length > 0 || rules.some((rule) => rule.matches(tool.name)), wrap };
}
