import Type from 'typebox';
import { callFailure } from '../src/call/tool-result.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { gate } from '../src/pipeline/gate.js';

export const AccessOptions = Type.Object({}, { additionalProperties: false });

/**
 * Deny re-check at execution (docs/security-model.md): the config may have changed since the listing, so
 * exposure rules are evaluated again against the call's config snapshot, plus a tool's own `permission: deny`.
 */
export function accessPolicy(options: unknown, _deps: PolicyDeps): PolicyLayer {
  parsePolicyOptions('access', AccessOptions, options);
  return gate((call, ctx) => {
    if (call.tool.permission === 'deny') return callFailure(call, 'PERMISSION_DENIED', `${call.name} is not permitted`);
    const decision = ctx.checkAccess(call.tool);
    return decision.ok ? undefined : callFailure(call, 'PERMISSION_DENIED', decision.reason);
  });
}
