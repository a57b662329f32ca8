import Type, { type Static } from 'typebox';
import { callFailure, isPermanentFailure } from '../src/call/tool-result.js';
import { USER_TOOL_LABEL } from '../src/observability/gateway-metrics.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import type { ToolResult } from '../src/call/types.js';
import { createCircuitRegistry } from '../src/pipeline/circuit-state.js';

export const CircuitBreakerOptions = Type.Object(
  {
    failureThreshold: Type.Integer({ minimum: 1, default: 5 }),
    cooldownMs: Type.Integer({ minimum: 1, default: 30_000 }),
    failureRate: Type.Optional(
      Type.Object(
        {
          threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
          minCalls: Type.Integer({ minimum: 1, default: 10 }),
          windowMs: Type.Integer({ minimum: 1, default: 60_000 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CircuitBreakerOptions = Static<typeof CircuitBreakerOptions>;

// Only failures the upstream caused count (docs/security-model.md#breaker-attribution): it did not answer
// in time, could not be reached, answered 5xx or broke the protocol. A bad argument, a request the gateway
// could not build, a size limit, a denial or a definite answer from the upstream (an HTTP 404: marked
// permanent by its executor) says nothing about it.
const countsAsFailure = (result: ToolResult): boolean =>
  (result.error?.errorType === 'UPSTREAM_ERROR' || result.error?.errorType === 'TIMEOUT') && !isPermanentFailure(result);

/**
 * Per upstream service (`tool.service`; tools without one are not guarded) and calling tenant: CIRCUIT_OPEN
 * immediately while open, one probe after the cool-down, closed again when the probe succeeds. State is per
 * replica and per tenant — see src/pipeline/circuit-state.ts for why.
 */
export function circuitBreakerPolicy(options: unknown, deps: PolicyDeps): PolicyLayer {
  const circuitOptions = parsePolicyOptions('circuit-breaker', CircuitBreakerOptions, options);
  const clock = deps.clock ?? systemClock;
  const circuits = deps.circuits ?? createCircuitRegistry((label, state, member) => deps.metrics?.circuitState(label, state, member));
  const wrap: PolicyLayer['wrap'] = (next, answer) => async (call, ctx) => {
    const service = call.tool.service;
    if (!service) return next(call, ctx);
    // A user-level service is one user's: its circuit is that user's too. Its name holds only the user key,
    // which two subjects can share (a plain `sub` equal to another's hashed key), so the raw subject keys it.
    // Metrics name it only as the bucket `__user__`.
    const own = call.tool.source === 'user-mcp';
    const member = own ? JSON.stringify([ctx.principal.tenant, ctx.principal.user]) : ctx.principal.tenant;
    const circuit = circuits.get(service, member, circuitOptions, own ? USER_TOOL_LABEL : service);
    const admission = circuit.admit(clock.now());
    if (!admission.admit) {
      return answer(callFailure(call, 'CIRCUIT_OPEN', `upstream ${service} is failing; retry in ${Math.ceil(admission.retryAfterMs / 1000)} s`));
    }
    // A throw from below is the gateway's own fault (executors answer failures as results): not counted.
    let failed: boolean | undefined;
    try {
      const result = await next(call, ctx);
      failed = countsAsFailure(result);
      return result;
    } finally {
      // A call its caller gave up on (the client hung up, a batch was cancelled) ends as TIMEOUT or a throw,
      // but says nothing about the upstream: counted, a burst of hang-ups would open the circuit.
      if (failed === undefined || (failed && ctx.cancellation.aborted)) circuit.release(admission.probe);
      else circuit.record(failed, clock.now(), admission.probe);
    }
  };
  return { appliesTo: (tool) => tool.service !== undefined, wrap };
}
