import { attachGuardrailEvents } from '../src/audit/guardrail-events.js';
import { compileGuardrails, GuardrailConfigError } from '../src/guardrails/compile.js';
import { GuardrailsSchema, type GuardrailsConfig } from '../src/config/guardrails.js';
import { Ajv } from 'ajv';
import { guardedResult, onlyOutput, refusedArguments, resultSurfaces, withheldResult, type ResultSurfaces } from '../src/guardrails/result.js';
import type { Cancellation } from '../src/shared/cancellation.js';
import { CheckedCensus, nothingToFind, scan, type ScanOutcome } from '../src/guardrails/scan.js';
import type { GuardrailEvent } from '../src/guardrails/types.js';
import { errors } from '../src/errors.js';
import type { ToolCall, ToolResult } from '../src/call/types.js';
import type { Answer, PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';

// Not the policies' strict compiler (src/pipeline/options.ts): the schema's defaults sit inside `oneOf` branches.
// `optimize: false`: compiled at start-up, where the optimizer's `{}` per generated name would crowd V8's
// empty-object shape table (src/config/load.ts says why that costs the request path).
const validateGuardrails = new Ajv({ strict: false, code: { optimize: false } }).compile(GuardrailsSchema);

/**
 * Guardrails on what flows through a call (docs/governance.md#guardrails): the tenant's rules scan the
 * arguments before the executor and the result after it — secrets, personal data, injected instructions,
 * selected fields — and mask, hash, block or flag what they find. The options are `tenants.<t>.guardrails`
 * (or the gateway's `guardrails` for tenants without their own), validated with the config; undefined
 * (no rules) leaves the policy out of the chain.
 */
export function guardrailsPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  // Validated with the config already when it comes from `guardrails` keys; `policies.guardrails` is checked here.
  if (options !== undefined && !validateGuardrails(options)) {
    const error = validateGuardrails.errors?.[0];
    throw new errors.TG_CONFIG_INVALID(`policies.guardrails${error?.instancePath.replace(/\//g, '.') ?? ''} ${error?.message ?? 'is invalid'}`);
  }
  const config = options as GuardrailsConfig | undefined;
  let guardrails;
  try {
    guardrails = compileGuardrails(config);
  } catch (error) {
    if (error instanceof GuardrailConfigError) throw new errors.TG_CONFIG_INVALID(`guardrails.${error.message}`);
    throw error;
  }
  if (!guardrails) return undefined;
  const g = guardrails;
  const record = deps.guardrails?.record ?? (() => {});
  const NO_EVENTS: readonly GuardrailEvent[] = [];
  /** What the result side's scan decided, as the result the caller gets. */
  const judged = (call: ToolCall, tenant: string, result: ToolResult, surfaces: ResultSurfaces, argumentEvents: readonly GuardrailEvent[], answer: Answer, outcome: ScanOutcome): ToolResult => {
    record(tenant, outcome.events);
    const events = argumentEvents.length + surfaces.events.length === 0 ? outcome.events : [...argumentEvents, ...surfaces.events, ...outcome.events];
    if (outcome.kind === 'blocked') return answer(attachGuardrailEvents(withheldResult(call, result, outcome.kinds), events));
    return attachGuardrailEvents(guardedResult(surfaces, outcome.values), events);
  };
  /** The result side: scanned after the executor; a small result's scan answers at once (scan.ts), with no await of its own. */
  const guardResult = (call: ToolCall, tenant: string, cancellation: Cancellation, result: ToolResult, argumentEvents: readonly GuardrailEvent[], answer: Answer): ToolResult | Promise<ToolResult> => {
    const resultRules = g.rulesFor(call.name, 'result');
    if (resultRules.length === 0 || result.status === 'pending_approval') return attachGuardrailEvents(result, argumentEvents);
    // The common answer: an output alone, in which the census rules every rule's detectors out (no surfaces, no scan).
    // The census the check took is handed to the scan: a text the check could not clear is not counted twice.
    const output = onlyOutput(result);
    let checked: CheckedCensus | undefined;
    if (output !== undefined) {
      checked = new CheckedCensus();
      if (nothingToFind(output, resultRules, g.limits, checked)) return attachGuardrailEvents(result, argumentEvents);
    }
    let selectsFields = false;
    for (const rule of resultRules) if (rule.fields !== undefined) selectsFields = true;
    const surfaces = resultSurfaces(result, g.limits, selectsFields);
    const outcome = scan({ direction: 'result', surfaces: surfaces.list, rules: resultRules, limits: g.limits, hashKey: g.hashKey(tenant), cancellation, checked });
    return outcome instanceof Promise
      ? outcome.then((scanned) => judged(call, tenant, result, surfaces, argumentEvents, answer, scanned))
      : judged(call, tenant, result, surfaces, argumentEvents, answer, outcome);
  };
  const wrap: PolicyLayer['wrap'] = (next, answer) => (call, ctx) => {
    const tenant = ctx.principal.tenant;
    const cancellation = ctx.cancellation;
    const argumentRules = g.rulesFor(call.name, 'arguments');
    // No argument rules (most tools): the call goes on at once, and only its result waits for the scan.
    if (argumentRules.length === 0) {
      let pending;
      try {
        pending = next(call, ctx);
      } catch (error) {
        return Promise.reject(error as Error); // as an async layer would: the chain's callers handle rejections
      }
      return pending.then((result) => guardResult(call, tenant, cancellation, result, NO_EVENTS, answer));
    }
    return (async () => {
      const outcome = await scan({ direction: 'arguments', surfaces: [{ value: call.arguments, selectable: true }], rules: argumentRules, limits: g.limits, hashKey: g.hashKey(tenant), cancellation });
      record(tenant, outcome.events);
      if (outcome.kind === 'blocked') return answer(attachGuardrailEvents(refusedArguments(call, outcome.kinds), outcome.events));
      const rewritten = outcome.values[0];
      const sent = rewritten === undefined ? call : { ...call, arguments: rewritten as typeof call.arguments };
      return guardResult(call, tenant, cancellation, await next(sent, ctx), outcome.events, answer);
    })();
  };
  return {
    appliesTo: (tool) => g.rulesFor(tool.name, 'arguments').length > 0 || g.rulesFor(tool.name, 'result').length > 0,
    wrap,
  };
}
