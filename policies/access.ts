import type { PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { gatePolicy } from '../src/pipeline/fast-path.js';
import type { Policy } from '../src/pipeline/types.js';
import { callFailure } from '../src/execution/tool-result.js';

export const accessOptionsSchema = { type: 'object', additionalProperties: false, properties: {} };

/**
 * Deny re-check at execution (CONTRACT §4): the config may have changed since the listing, so exposure
 * rules are evaluated again against the call's config snapshot, plus a tool's own `permission: deny`.
 */
export function accessPolicy(options: unknown, _deps: PolicyDeps): Policy {
  parsePolicyOptions('access', accessOptionsSchema, options);
  return gatePolicy((call, ctx) => {
    if (call.tool.permission === 'deny') return callFailure(call, 'PERMISSION_DENIED', `${call.name} is not permitted`);
    const decision = ctx.checkAccess(call.tool);
    return decision.ok ? undefined : callFailure(call, 'PERMISSION_DENIED', decision.reason);
  });
}
