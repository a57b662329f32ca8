import { isAbsolute, resolve } from 'node:path';
import { accessPolicy } from '../../policies/access.js';
import { approvalPolicy } from '../../policies/approval.js';
import { auditPolicy } from '../../policies/audit.js';
import { bindArgumentsPolicy } from '../../policies/bind-arguments.js';
import { circuitBreakerPolicy } from '../../policies/circuit-breaker.js';
import { maxDepthPolicy } from '../../policies/max-depth.js';
import { rateLimitPolicy } from '../../policies/rate-limit.js';
import { retryPolicy } from '../../policies/retry.js';
import { timeoutPolicy } from '../../policies/timeout.js';
import { mergeBindings } from '../bindings/merge.js';
import { importUserModule } from '../modules/import-user-module.js';
import { errors } from '../errors.js';
import type { JsonObject, Tool, ToolCall, ToolResult } from '../types.js';
import type { PolicyDeps } from './deps.js';
import { gateCheckOf, inertTestOf, type GateCheck } from './fast-path.js';
import { noopPolicyMetrics, type PolicyMetrics } from './metrics.js';
import { parsePolicyOptions } from './options.js';
import { DEFAULT_POLICY_ORDER, REQUIRED_POLICIES, type BuiltinPolicyName } from './order.js';
import { composePolicies, passThrough, type Next, type Policy, type PolicyContext } from './types.js';

/** What a custom policy module's default export must be. */
export type PolicyFactory = (options: unknown, deps: PolicyDeps) => Policy | Promise<Policy>;

const BUILTIN_FACTORIES: Record<BuiltinPolicyName, PolicyFactory> = {
  audit: auditPolicy,
  'rate-limit': rateLimitPolicy,
  access: accessPolicy,
  'bind-arguments': bindArgumentsPolicy,
  approval: approvalPolicy,
  'max-depth': maxDepthPolicy,
  'circuit-breaker': circuitBreakerPolicy,
  retry: retryPolicy,
  timeout: timeoutPolicy,
};

const customSchema = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['module'],
    properties: {
      module: { type: 'string', minLength: 1 },
      name: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' },
      before: { type: 'string', enum: DEFAULT_POLICY_ORDER.filter((name) => name !== 'audit') },
      after: { type: 'string', enum: [...DEFAULT_POLICY_ORDER] },
      options: {},
    },
    oneOf: [{ required: ['before'] }, { required: ['after'] }],
  },
};

interface CustomEntry {
  module: string;
  name?: string;
  before?: BuiltinPolicyName;
  after?: BuiltinPolicyName;
  options?: unknown;
}

export interface PolicyChainOptions {
  /** `tenants.<t>.policies`: options per policy, `false` to switch one off, `custom` modules. */
  tenantPolicies?: Record<string, unknown>;
  /** `tenants.<t>.bindings` (tool name or glob → templates), handed to bind-arguments. */
  tenantBindings?: Record<string, JsonObject>;
  deps: PolicyDeps;
  /** Custom modules resolve against the config file's folder. */
  baseDir: string;
}

export type PolicyChain = ((call: ToolCall, ctx: PolicyContext, terminal: Next) => Promise<ToolResult>) & {
  /** Policy names in execution order, outermost first (for logs and tests). */
  readonly policies: readonly string[];
};

/** Counts each policy's decision: `pass` when it handed the call on, otherwise what it answered. */
function instrument(name: string, policy: Policy, metrics: PolicyMetrics): Policy {
  // No extra async frame: the pass is counted when the policy hands on, an answer when it resolves without doing so.
  const pass = metrics.decisionCell(name, 'pass');
  return (call, ctx, next) => {
    let passed = false;
    // An inline anonymous arrow: a named per-call closure also costs a defineProperty under tsx (keepNames).
    const answer = policy(call, ctx, (c, x) => {
      passed = true;
      pass.inc();
      return next(c, x);
    });
    // Handed on already (retry, timeout and most policies do so at once): the decision is counted, and
    // waiting for the result would only add a promise per layer.
    if (passed) return answer;
    return answer.then((result) => {
      if (!passed) metrics.decision(name, result.status ?? result.error?.errorType ?? 'answered');
      return result;
    });
  };
}

/** A gate run inline: the same decisions counted as instrument() counts them, without an async layer. */
function inlineGate(name: string, check: GateCheck, metrics: PolicyMetrics, next: Next): Next {
  const pass = metrics.decisionCell(name, 'pass');
  return (call, ctx) => {
    let answer: ToolResult | undefined;
    try {
      answer = check(call, ctx);
    } catch (error) {
      return Promise.reject(error);
    }
    if (answer) {
      metrics.decision(name, answer.status ?? answer.error?.errorType ?? 'answered');
      return Promise.resolve(answer);
    }
    pass.inc();
    return next(call, ctx);
  };
}

function bindArgumentsOptions(raw: unknown, tenantBindings: Record<string, JsonObject> | undefined): unknown {
  if (!tenantBindings || raw === false) return raw;
  if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) return raw; // the schema names it
  return { ...(raw as object | undefined), bindings: mergeBindings(tenantBindings, raw) };
}

async function loadCustom(entry: CustomEntry, index: number, baseDir: string, deps: PolicyDeps): Promise<{ name: string; policy: Policy }> {
  const path = isAbsolute(entry.module) ? entry.module : resolve(baseDir, entry.module);
  const label = `policies.custom.${index}`;
  let factory: unknown;
  try {
    factory = ((await importUserModule(path)) as { default?: unknown }).default;
  } catch (error) {
    throw new errors.TG_CONFIG_INVALID(`${label}.module cannot be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof factory !== 'function') throw new errors.TG_CONFIG_INVALID(`${label}.module must default-export a policy factory`);
  const policy = await (factory as PolicyFactory)(entry.options, deps);
  if (typeof policy !== 'function') throw new errors.TG_CONFIG_INVALID(`${label}.module factory did not return a policy function`);
  return { name: entry.name ?? `custom-${index}`, policy };
}

/**
 * Builds one tenant's chain from its config, failing fast (TG_CONFIG_INVALID, key named) on unknown
 * policies, bad options, switching off audit/access, or a custom module that does not load.
 * Build it once per tenant per config snapshot and reuse it for every call.
 */
export async function createPolicyChain(options: PolicyChainOptions): Promise<PolicyChain> {
  const tenantPolicies = options.tenantPolicies ?? {};
  const { deps } = options;
  for (const key of Object.keys(tenantPolicies)) {
    if (key !== 'custom' && !(DEFAULT_POLICY_ORDER as readonly string[]).includes(key)) {
      throw new errors.TG_CONFIG_INVALID(`policies.${key} is not a known policy`);
    }
  }
  const custom = parsePolicyOptions<CustomEntry[]>('custom', customSchema, tenantPolicies.custom ?? []);

  const customsAt = (side: 'before' | 'after', name: BuiltinPolicyName) =>
    Promise.all(custom.flatMap((entry, i) => (entry[side] === name ? [loadCustom(entry, i, options.baseDir, deps)] : [])));

  const slots: Array<{ name: string; policy: Policy }> = [];
  for (const name of DEFAULT_POLICY_ORDER) {
    const raw = name === 'bind-arguments' ? bindArgumentsOptions(tenantPolicies[name], options.tenantBindings) : tenantPolicies[name];
    slots.push(...(await customsAt('before', name)));
    if (raw === false) {
      if (REQUIRED_POLICIES.includes(name)) throw new errors.TG_CONFIG_INVALID(`policies.${name} cannot be switched off`);
    } else {
      slots.push({ name, policy: await BUILTIN_FACTORIES[name](raw, deps) });
    }
    slots.push(...(await customsAt('after', name)));
  }

  const metrics = deps.metrics ?? noopPolicyMetrics;
  const active = slots.filter(({ policy }) => policy !== passThrough);
  // A custom policy may hand on a different call, so per-tool inertness is only trusted in an all-built-in chain.
  const builtinOnly = custom.length === 0;
  const layers = active.map(({ name, policy }) => ({
    name,
    policy: instrument(name, policy, metrics),
    isInert: builtinOnly ? inertTestOf(policy) : undefined,
    gate: gateCheckOf(policy),
  }));
  const policies = layers.map((layer) => layer.policy);
  // Per tool, layers inert for it are left out; their `pass` is still counted where they would have run.
  const composeFor = (tool: Tool, terminal: Next): Next =>
    layers.reduceRight<Next>((next, layer) => {
      if (layer.isInert?.(tool)) {
        const pass = metrics.decisionCell(layer.name, 'pass');
        return (call, ctx) => {
          pass.inc();
          return next(call, ctx);
        };
      }
      const { policy, gate, name } = layer;
      if (gate) return inlineGate(name, gate, metrics, next);
      return (call, ctx) => policy(call, ctx, next);
    }, terminal);
  // Composed once per terminal executor (and tool), not once per call.
  const composed = new WeakMap<Next, Next>();
  const perTool = new WeakMap<Next, WeakMap<Tool, Next>>();
  const chain = (call: ToolCall, ctx: PolicyContext, terminal: Next): Promise<ToolResult> => {
    if (call.name === call.tool.name) {
      let byTool = perTool.get(terminal);
      if (!byTool) perTool.set(terminal, (byTool = new WeakMap()));
      let run = byTool.get(call.tool);
      if (!run) byTool.set(call.tool, (run = composeFor(call.tool, terminal)));
      return run(call, ctx);
    }
    let run = composed.get(terminal);
    if (!run) composed.set(terminal, (run = composePolicies(policies, terminal)));
    return run(call, ctx);
  };
  return Object.assign(chain, { policies: Object.freeze(slots.map((slot) => slot.name)) });
}
