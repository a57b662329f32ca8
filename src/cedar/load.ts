// Loads one tenant's Cedar policies (docs/governance.md#cedar-policies): read, bounded, validated against the
// generated schema off the event loop, then preparsed once on this thread for every decision to use. Any
// problem is a configuration error naming the policy and its position (relative to the tenant's `cedar` key): exit 78 at start, 400 from the tenant
// API, and a refused reload that leaves the old set serving.
import { ConfigError } from '../config/interpolate.js';
import type { CedarConfig } from '../config/types.js';
import type { Tool } from '../call/types.js';
import { CedarEngine, type CedarEngineParts } from './engine.js';
import { argumentTypes, generateSchema } from './schema.js';
import { checkBounds, positionOf, PolicyTextError, readPolicyText, type PolicyText } from './source-text.js';
import { validateOffThread, type ValidationProblem } from './validate.js';
import { loadCedar, type Cedar } from './wasm.js';

export interface CedarLoadOptions {
  tenant: string;
  config: CedarConfig;
  /** The tools whose input schemas type `context.arguments` (the catalog the tenant is compiled on). */
  tools: readonly Tool[];
  /** Policy files resolve against it (the config file's folder). */
  baseDir: string;
  /** How messages name the inline text (`policies`, the key under the tenant's `cedar`). */
  label?: string;
  onDecision?: CedarEngineParts['onDecision'];
  /** Validation deadline; the default is limits.ts's. */
  deadlineMs?: number;
}

/** A policy appended for `default: permit`: what no policy decides is permitted, and forbids narrow. */
export const DEFAULT_PERMIT_ID = 'toolgate.default-permit';
const DEFAULT_PERMIT = `\n@id("${DEFAULT_PERMIT_ID}")\npermit(principal, action, resource);\n`;

/** Preparsed set ids are per thread and live until replaced: each tenant keeps its last few, older ones are emptied. */
const KEPT_PER_TENANT = 4;
const setIds = new Map<string, string[]>();
let generation = 0;

function freshSetIds(cedar: Cedar, tenant: string): [string, string] {
  generation += 1;
  const ids: [string, string] = [`${tenant}\u0000${generation}`, `${tenant}\u0000${generation}\u0000listing`];
  const kept = setIds.get(tenant) ?? [];
  kept.push(...ids);
  while (kept.length > KEPT_PER_TENANT * 2) cedar.preparsePolicySet(kept.shift()!, { staticPolicies: '' });
  setIds.set(tenant, kept);
  return ids;
}

function describe(source: PolicyText, problem: ValidationProblem): string {
  const named = [
    problem.policy === undefined ? undefined : `policy ${problem.policy}`,
    problem.offset === undefined || problem.offset >= source.text.length ? undefined : `at ${positionOf(source, problem.offset)}`,
  ].filter((part) => part !== undefined);
  const help = problem.help ? ` (${problem.help})` : '';
  return `${named.length > 0 ? `${named.join(' ')}: ` : ''}${problem.message}${help}`;
}

/** The tenant's engine, or a ConfigError naming what is wrong. */
export async function loadCedarEngine(options: CedarLoadOptions): Promise<CedarEngine> {
  const label = options.label ?? 'policies';
  let source: PolicyText;
  try {
    source = await readPolicyText(options.config, options.baseDir, label);
  } catch (error) {
    if (error instanceof PolicyTextError) throw new ConfigError(error.message);
    throw error;
  }
  const bounded = checkBounds(source);
  if (bounded) throw new ConfigError(bounded);
  const text = options.config.default === 'permit' ? `${source.text}${DEFAULT_PERMIT}` : source.text;
  const types = argumentTypes(options.tools);
  const schema = generateSchema(options.config, options.tools);
  const verdict = await validateOffThread({ text, schema }, options.deadlineMs);
  if (!verdict.ok) {
    const [first, ...rest] = verdict.problems;
    const more = rest.length > 0 ? ` (and ${rest.length} more)` : '';
    throw new ConfigError(`${describe(source, first ?? { message: 'the policies are invalid' })}${more}`);
  }
  const cedar = await loadCedar();
  const [setId, listingSetId] = freshSetIds(cedar, options.tenant);
  for (const [id, policies] of [[setId, verdict.policies], [listingSetId, verdict.listing]] as const) {
    const answer = cedar.preparsePolicySet(id, { staticPolicies: policies });
    if (answer.type === 'failure') throw new ConfigError(answer.errors[0]?.message ?? 'the policies cannot be prepared');
  }
  return new CedarEngine({
    cedar,
    tenant: options.tenant,
    config: options.config,
    schema,
    argumentTypes: types,
    setId,
    listingSetId,
    forbids: new Set(verdict.forbids),
    reads: verdict.reads,
    policyCount: Object.keys(verdict.policies).length,
    onDecision: options.onDecision,
  });
}
