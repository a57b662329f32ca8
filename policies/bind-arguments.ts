import picomatch from 'picomatch';
import { withBoundArguments } from '../src/bindings/model-arguments.js';
import { applyBindings, resolveBindings } from '../src/bindings/resolve.js';
import type { PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { inertFor } from '../src/pipeline/fast-path.js';
import type { Policy } from '../src/pipeline/types.js';
import { callFailure } from '../src/execution/tool-result.js';
import type { JsonObject } from '../src/types.js';

export const bindArgumentsOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Tool name or glob → argument templates. The chain builder fills this from `tenants.<t>.bindings`.
    bindings: { type: 'object', additionalProperties: { type: 'object' }, default: {} },
  },
};

/**
 * Server-side arguments (CONTRACT §2): the tool's own `bindings` merged with the tenant's (tenant wins per
 * top-level key), expanded for the caller's principal, then written over the model's arguments. Runs
 * after access (a denied call binds nothing) and before approval (the approver sees the bound call).
 * A template whose claim is missing fails the call closed; it never drops the filter.
 */
export function bindArgumentsPolicy(options: unknown, _deps: PolicyDeps): Policy {
  const { bindings } = parsePolicyOptions<{ bindings: Record<string, JsonObject> }>('bind-arguments', bindArgumentsOptionsSchema, options);
  const rules = Object.entries(bindings).map(([glob, template]) => ({ matches: picomatch(glob, { dot: true }), template }));
  return inertFor(async (call, ctx, next) => {
    let template: JsonObject = { ...(call.tool.bindings ?? {}) };
    for (const rule of rules) if (rule.matches(call.name)) template = { ...template, ...rule.template };
    if (Object.keys(template).length === 0) return next(call, ctx);
    const bound = resolveBindings(template, ctx.principal);
    if (!bound.ok) return callFailure(call, 'PERMISSION_DENIED', `server-side binding failed: ${bound.reason}`);
    return next(withBoundArguments(call, applyBindings(call.arguments, bound.value)), ctx);
  }, (tool) => Object.keys(tool.bindings ?? {}).length === 0 && !rules.some((rule) => rule.matches(tool.name)));
}
