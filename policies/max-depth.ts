import Type from 'typebox';
import { callFailure } from '../src/call/tool-result.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { gate } from '../src/pipeline/gate.js';

export const MaxDepthOptions = Type.Object({ limit: Type.Integer({ minimum: 0, default: 4 }) }, { additionalProperties: false });

/** Loop protection when gateways call gateways: `X-Toolgate-Depth` above the limit is refused. */
export function maxDepthPolicy(options: unknown, _deps: PolicyDeps): PolicyLayer {
  const { limit } = parsePolicyOptions('max-depth', MaxDepthOptions, options);
  return gate((call, ctx) => (ctx.depth > limit ? callFailure(call, 'DEPTH_EXCEEDED', `call depth ${ctx.depth} exceeds the limit of ${limit}`) : undefined));
}
