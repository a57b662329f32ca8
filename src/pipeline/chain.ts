import { isAbsolute, resolve } from 'node:path';
import { LRUCache } from 'lru-cache';
import Type from 'typebox';
import type { CedarEngine } from '../cedar/engine.js';
import { mergeBindings } from '../bindings/merge.js';
import { importUserModule } from '../modules/import-user-module.js';
import { errors } from '../errors.js';
import { didYouMean } from '../shared/did-you-mean.js';
import { deriveContext } from '../call/call-context.js';
import { Cancellation } from '../shared/cancellation.js';
import { isTracing, recordDecision } from '../observability/tracing.js';
import type { JsonObject, Tool } from '../call/types.js';
import { noopPolicyMetrics, type PolicyMetrics } from './policy-metrics.js';
import { bindsNothing, type BindingRules } from '../bindings/rules.js';
import { parsePolicyOptions } from './options.js';
import { builtinLayer } from './shared-layers.js';
import { DEFAULT_POLICY_ORDER, REQUIRED_POLICIES, type BuiltinPolicyName } from './order.js';
import type { Answer, BuiltinPolicies, Next, Policy, PolicyContext, PolicyDeps, PolicyLayer } from './types.js';

/** What a custom policy module's default export must be. */
export type PolicyFactory = (options: unknown, deps: PolicyDeps) => Policy | Promise<Policy>;

const builtinName = (names: readonly string[]) => Type.Enum(names, { type: 'string' });
const CustomEntries = Type.Array(
  Type.Object(
    {
      module: Type.String({ minLength: 1 }),
      name: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,40}$' })),
      before: Type.Optional(builtinName(DEFAULT_POLICY_ORDER.filter((name) => name !== 'audit'))),
      after: Type.Optional(builtinName(DEFAULT_POLICY_ORDER)),
      options: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false, oneOf: [{ required: ['before'] }, { required: ['after'] }] },
  ),
);

export interface PolicyChainOptions {
  /** The built-in policies by name (policies/index.ts), injected so this folder never imports them. */
  builtins: BuiltinPolicies;
  /** `tenants.<t>.policies`: options per policy, `false` to switch one off, `custom` modules. */
  tenantPolicies?: Record<string, unknown>;
  /** `tenants.<t>.bindings` (tool name or glob → templates), handed to bind-arguments. */
  tenantBindings?: Record<string, JsonObject>;
  /** The same bindings (with the policy's own) compiled once with the tenant's view; handed to bind-arguments as `deps.bindings`. */
  bindingRules?: BindingRules | undefined;
  deps: PolicyDeps;
  /** Custom modules resolve against the config file's folder. */
  baseDir: string;
  /** The executor the chain wraps. */
  terminal: Next;
  /** The tenant's Cedar policies (`tenants.<t>.cedar`), handed to the cedar policy only. */
  cedar?: CedarEngine | undefined;
}

export type PolicyChain = Next & {
  /** Policy names in execution order, outermost first (for logs and tests). */
  readonly policies: readonly string[];
  /**
   * Whether the built-in `policy` has something to do for calls to `tool` under its own name (its layer is
   * configured and its `appliesTo` does not leave the tool out): read from config, nothing runs.
   */
  applies(policy: BuiltinPolicyName, tool: Tool): boolean;
};

/**
 * A custom policy function as a layer: the one place the operators' `(call, ctx, next)` shape is adapted.
 * Whether it handed this call on is only known per call, so this layer keeps a flag per call.
 */
function customLayer(policy: Policy): PolicyLayer {
  return {
    wrap: (next, answer) => (call, ctx) => {
      let passed = false;
      const result = policy(call, ctx, (c, x) => {
        passed = true;
        return next(c, x === ctx ? x : handedOn(x, ctx));
      });
      // Handed on already (most policies do so at once): waiting for the result would only add a promise.
      if (passed) return result;
      return result.then((answered) => (passed ? answered : answer(answered)));
    },
  };
}

/**
 * A context a custom policy built itself, rebuilt as the chain's own: `{ ...ctx }` keeps `cancellation` but drops
 * the `signal` getter, so handed on as it is the call would lose its cancellation below. A signal the policy set
 * itself is the one the call follows.
 */
function handedOn(given: PolicyContext, ctx: PolicyContext): PolicyContext {
  const own = Object.hasOwn(given, 'signal') ? (given.signal as AbortSignal | undefined) : undefined;
  return deriveContext(given, { cancellation: own ? Cancellation.of(own) : (given.cancellation ?? ctx.cancellation) });
}

function bindArgumentsOptions(raw: unknown, tenantBindings: Record<string, JsonObject> | undefined): unknown {
  if (!tenantBindings || raw === false) return raw;
  if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) return raw; // the schema names it
  return { ...(raw as object | undefined), bindings: mergeBindings(tenantBindings, raw) };
}

async function loadCustom(module: string, index: number, baseDir: string): Promise<PolicyFactory> {
  const path = isAbsolute(module) ? module : resolve(baseDir, module);
  const label = `policies.custom.${index}`;
  let factory: unknown;
  try {
    factory = ((await importUserModule(path)) as { default?: unknown }).default;
  } catch (error) {
    throw new errors.TG_CONFIG_INVALID(`${label}.module cannot be loaded: ${error instanceof Error ? error.message.split('\n', 1)[0] : String(error)}`);
  }
  if (typeof factory !== 'function') throw new errors.TG_CONFIG_INVALID(`${label}.module must default-export a policy factory`);
  return factory as PolicyFactory;
}

interface Slot {
  name: string;
  /** Undefined when its options leave the policy nothing to do: listed, but never composed. */
  layer: PolicyLayer | undefined;
  /** A built-in's slot (a custom policy may be named like one). */
  builtin?: true;
}

/**
 * Builds one tenant's chain from its config, in the order of src/pipeline/order.ts, failing fast
 * (TG_CONFIG_INVALID, key named) on unknown policies, bad options, switching off audit/access, or a
 * custom module that does not load. Build it once per tenant per config snapshot: each tool's chain is
 * composed on its first call and reused for every later one.
 */
export async function createPolicyChain(options: PolicyChainOptions): Promise<PolicyChain> {
  const tenantPolicies = options.tenantPolicies ?? {};
  const { deps } = options;
  for (const key of Object.keys(tenantPolicies)) {
    if (key !== 'custom' && !(DEFAULT_POLICY_ORDER as readonly string[]).includes(key)) {
      const hint = didYouMean(key, [...DEFAULT_POLICY_ORDER, 'custom']) || `; the policies are ${DEFAULT_POLICY_ORDER.join(', ')} and custom`;
      throw new errors.TG_CONFIG_INVALID(`policies.${key} is not a known policy${hint}`);
    }
  }
  const custom = parsePolicyOptions('custom', CustomEntries, tenantPolicies.custom ?? []);
  // One at a time, in config order: the first bad entry is the one named.
  const customs: Array<Slot & { before?: string; after?: string }> = [];
  for (const [index, entry] of custom.entries()) {
    const factory = await loadCustom(entry.module, index, options.baseDir);
    // A factory refuses its options by throwing: that is the configuration's error, named as such.
    const policy = await Promise.resolve()
      .then(() => factory(entry.options, deps))
      .catch((error: unknown) => {
        throw new errors.TG_CONFIG_INVALID(`policies.custom.${index}.options refused by ${entry.module}: ${error instanceof Error ? error.message.split('\n', 1)[0] : String(error)}`);
      });
    if (typeof policy !== 'function') throw new errors.TG_CONFIG_INVALID(`policies.custom.${index}.module factory did not return a policy function`);
    customs.push({ name: entry.name ?? `custom-${index}`, layer: customLayer(policy), before: entry.before, after: entry.after });
  }

  const slots: Slot[] = [];
  for (const name of DEFAULT_POLICY_ORDER) {
    const raw = name === 'bind-arguments' ? bindArgumentsOptions(tenantPolicies[name], options.tenantBindings) : tenantPolicies[name];
    slots.push(...customs.filter((entry) => entry.before === name));
    if (raw === false) {
      if (REQUIRED_POLICIES.includes(name)) throw new errors.TG_CONFIG_INVALID(`policies.${name} cannot be switched off`);
    } else {
      const layerDeps = name === 'bind-arguments' && options.bindingRules ? { ...deps, bindings: options.bindingRules } : name === 'cedar' && options.cedar ? { ...deps, cedar: options.cedar } : deps;
      const layer = builtinLayer(name, options.builtins[name], raw, deps, layerDeps, !options.bindingRules || bindsNothing(options.bindingRules));
      slots.push({ name, layer, builtin: true });
    }
    slots.push(...customs.filter((entry) => entry.after === name));
  }

  const metrics = deps.metrics ?? noopPolicyMetrics;
  // The closures below keep what they read alive with the chain: the terminal, not every option it was built from.
  const { terminal } = options;
  const layers: Composed[] = [];
  for (const slot of slots) if (slot.layer) layers.push(composedOf(metrics, slot.name, slot.layer, slot.builtin === true));
  // `tool` undefined: every layer. A layer left out for a tool still counts its `pass` where it would have run.
  const compose = (tool: Tool | undefined): Next =>
    layers.reduceRight<Next>((next, { layer, pass, answer }) => {
      const handOn: Next = (call, ctx) => {
        pass.inc();
        return next(call, ctx);
      };
      return tool && layer.appliesTo?.(tool) === false ? handOn : layer.wrap(handOn, answer);
    }, terminal);

  // A custom policy may hand on another call, and `appliesTo` judges the tool by its own name: layers are
  // left out only in chains of built-ins, for calls under the tool's own name.
  const perTool = customs.length === 0;
  let everyLayer: Next | undefined;
  // Made on a tool's first call: a tenant that only lists never calls (ten30: what a warm tenant holds).
  let byTool: WeakMap<Tool, Next> | undefined;
  const chain: Next = (call, ctx) => {
    if (!perTool || call.name !== call.tool.name) return (everyLayer ??= compose(undefined))(call, ctx);
    let run = byTool?.get(call.tool);
    if (!run) (byTool ??= new WeakMap()).set(call.tool, (run = compose(call.tool)));
    return run(call, ctx);
  };
  const applies = (policy: BuiltinPolicyName, tool: Tool): boolean => {
    for (const entry of layers) if (entry.builtin && entry.name === policy) return entry.layer.appliesTo?.(tool) !== false;
    return false;
  };
  return Object.assign(chain, { policies: namesOf(slots), applies });
}

/** A layer as the chain composes it: its decision counters and the `answer` that counts a decision of its own. */
interface Composed {
  readonly name: string;
  readonly builtin: boolean;
  readonly layer: PolicyLayer;
  readonly pass: ReturnType<PolicyMetrics['decisionCell']>;
  readonly answer: Answer;
}

// A layer shared by tenants' chains (src/pipeline/shared-layers.ts) is composed with the same counters and
// `answer` in each: made once per layer and metrics, not once per chain (a closure and a context each).
const composedByMetrics = new WeakMap<PolicyMetrics, WeakMap<PolicyLayer, Composed>>();

function composedOf(metrics: PolicyMetrics, name: string, layer: PolicyLayer, builtin: boolean): Composed {
  let byLayer = composedByMetrics.get(metrics);
  if (!byLayer) composedByMetrics.set(metrics, (byLayer = new WeakMap()));
  const known = byLayer.get(layer);
  if (known && known.name === name && known.builtin === builtin) return known;
  const answer: Answer = (result) => {
    const decision = result.status ?? result.error?.errorType ?? 'answered';
    metrics.decision(name, decision);
    // A policy that decided the call (refused, parked for approval) is a span of its own under the call.
    if (isTracing()) recordDecision(name, decision);
    return result;
  };
  const composed: Composed = { name, builtin, layer, pass: metrics.decisionCell(name, 'pass'), answer };
  if (!known) byLayer.set(layer, composed);
  return composed;
}

// The chains' lists of policy names: a handful of distinct ones (the default order, less what tenants switch off).
const namesByKey = new LRUCache<string, readonly string[]>({ max: 256 });

function namesOf(slots: readonly Slot[]): readonly string[] {
  const names = slots.map((slot) => slot.name);
  const key = names.join(' ');
  let shared = namesByKey.get(key);
  if (!shared) namesByKey.set(key, (shared = Object.freeze(names)));
  return shared;
}
