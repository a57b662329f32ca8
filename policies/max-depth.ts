import type { PolicyDeps } from '../src/pipeline/deps.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import { gatePolicy } from '../src/pipeline/fast-path.js';
import type { Policy } from '../src/pipeline/types.js';
import { callFailure } from '../src/execution/tool-result.js';

export const maxDepthOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 0, default: 4 } },
};

/** Loop protection when gateways call gateways: `X-Toolgate-Depth` above the limit is refused. */
export function maxDepthPolicy(options: unknown, _deps: PolicyDeps): Policy {
  const { limit } = parsePolicyOptions<{ limit: number }>('max-depth', maxDepthOptionsSchema, options);
  return gatePolicy((call, ctx) =>
    ctx.depth > limit ? callFailure(call, 'DEPTH_EXCEEDED', `call depth ${ctx.depth} exceeds the limit of ${limit}`) : undefined,
  );
}
