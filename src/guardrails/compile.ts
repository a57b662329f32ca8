// A tenant's guardrails config compiled once per config snapshot (docs/governance.md#guardrails): rules
// with their tool matchers, detectors and selectors resolved; a bad rule fails the config with its key named.
import { createHmac, randomBytes } from 'node:crypto';
import { compileGlobs, type NameMatcher } from '../patterns/name-globs.js';
import { didYouMean } from '../shared/did-you-mean.js';
import type { GuardrailLimits, GuardrailRule, GuardrailsConfig, GuardrailsObject } from '../config/guardrails.js';
import { BUILTIN_DETECTORS, BUILTIN_KINDS, customDetector } from './detectors.js';
import { parseSelector, SelectorError, type Segment } from './json-path.js';
import { DETECTOR_GROUPS, type Detector, type Direction, type GuardrailAction } from './types.js';

export const DEFAULT_LIMITS: GuardrailLimits = { maxScanChars: 1024 * 1024, maxScanMs: 1000, onOversize: 'block' };

export interface CompiledRule {
  readonly index: number;
  readonly tools: NameMatcher;
  readonly directions: ReadonlySet<Direction>;
  /** The detectors to run (none for a fields-only rule) and the kinds of theirs to keep. */
  readonly detectors: readonly Detector[];
  readonly kinds: ReadonlySet<string>;
  readonly fields: ReadonlyArray<readonly Segment[]> | undefined;
  readonly action: GuardrailAction;
  readonly minScore: number;
}

export interface CompiledGuardrails {
  readonly rules: readonly CompiledRule[];
  readonly limits: GuardrailLimits;
  /** The rules for calls to `tool` in `direction`, in config order (cached per tool name). */
  rulesFor(tool: string, direction: Direction): readonly CompiledRule[];
  /** HMAC key of the `hash` action for `tenant`. */
  hashKey(tenant: string): Buffer;
}

/** Thrown for a bad guardrails config; `key` is the path under the guardrails key (e.g. `rules.2.detect`). */
export class GuardrailConfigError extends Error {
  constructor(readonly key: string, message: string) {
    super(`${key} ${message}`);
  }
}

/** A key for tenants without `hashKey`: stable for this process only (docs/governance.md#actions says so). */
const processKey = randomBytes(32);

function normalise(config: GuardrailsConfig): GuardrailsObject & { rules: GuardrailRule[] } {
  if (config === false) return { rules: [] };
  if (Array.isArray(config)) return { rules: config };
  return { ...config, rules: config.rules ?? [] };
}

function ruleDetectors(rule: GuardrailRule, at: string, custom: ReadonlyMap<string, Detector>): { detectors: Detector[]; kinds: Set<string> } {
  const detectors = new Set<Detector>();
  const kinds = new Set<string>();
  for (const name of rule.detect ?? []) {
    if ((DETECTOR_GROUPS as readonly string[]).includes(name)) {
      for (const detector of BUILTIN_DETECTORS.filter((d) => d.group === name)) {
        detectors.add(detector);
        for (const kind of detector.kinds) kinds.add(kind);
      }
    } else if (BUILTIN_KINDS.has(name)) {
      detectors.add(BUILTIN_DETECTORS.find((d) => d.kinds.includes(name))!);
      kinds.add(name);
    } else if (custom.has(name)) {
      detectors.add(custom.get(name)!);
      kinds.add(name);
    } else {
      const known = [...DETECTOR_GROUPS, ...BUILTIN_KINDS, ...custom.keys()];
      throw new GuardrailConfigError(`${at}.detect`, `names an unknown detector ${JSON.stringify(name)}${didYouMean(name, known) || `; known: ${known.join(', ')}`}`);
    }
  }
  return { detectors: [...detectors], kinds };
}

function compileRule(rule: GuardrailRule, index: number, custom: ReadonlyMap<string, Detector>): CompiledRule {
  const at = `rules.${index}`;
  if (!rule.detect && !rule.fields) throw new GuardrailConfigError(at, 'needs detect, fields or both');
  const { detectors, kinds } = ruleDetectors(rule, at, custom);
  if (kinds.has('injection') && (rule.action === 'mask' || rule.action === 'hash')) {
    throw new GuardrailConfigError(`${at}.action`, 'cannot rewrite injection findings: use flag or block (a silent rewrite would hide the attempt)');
  }
  let fields: Segment[][] | undefined;
  try {
    fields = rule.fields?.map((selector) => parseSelector(selector));
  } catch (error) {
    if (error instanceof SelectorError) throw new GuardrailConfigError(`${at}.fields`, `holds a selector that ${error.message}`);
    throw error;
  }
  let tools: NameMatcher;
  try {
    tools = compileGlobs(rule.tools ?? ['*']);
  } catch (error) {
    throw new GuardrailConfigError(`${at}.tools`, (error as Error).message);
  }
  // Defaults are filled by the config's validation; a rule built in code (tests, the bench) may leave them out.
  const on = rule.on ?? 'result';
  const directions = new Set<Direction>(on === 'both' ? ['arguments', 'result'] : [on]);
  return { index, tools, directions, detectors, kinds, fields, action: rule.action, minScore: rule.minScore ?? 0.5 };
}

/** Compiles a guardrails config; undefined when it has no rules (the policy then leaves the chain). */
export function compileGuardrails(config: GuardrailsConfig | undefined): CompiledGuardrails | undefined {
  if (config === undefined) return undefined;
  const object = normalise(config);
  if (object.rules.length === 0) return undefined;
  const custom = new Map<string, Detector>();
  for (const [name, detector] of Object.entries(object.detectors ?? {})) {
    try {
      custom.set(name, customDetector(name, detector));
    } catch (error) {
      throw new GuardrailConfigError(`detectors.${name}`, (error as Error).message);
    }
  }
  const rules = object.rules.map((rule, index) => compileRule(rule, index, custom));
  const limits = { ...DEFAULT_LIMITS, ...object.limits };
  // Per side, by tool name: no key string built per call.
  const cache = { arguments: new Map<string, readonly CompiledRule[]>(), result: new Map<string, readonly CompiledRule[]>() };
  const base = object.hashKey ?? processKey;
  // One key per tenant, made once: an HMAC per call would be spent on every call, hashed or not.
  const keys = new Map<string, Buffer>();
  return {
    rules,
    limits,
    rulesFor(tool, direction) {
      const side = cache[direction];
      let found = side.get(tool);
      if (!found) {
        found = rules.filter((rule) => rule.directions.has(direction) && rule.tools(tool));
        if (side.size < 10_000) side.set(tool, found);
      }
      return found;
    },
    hashKey(tenant) {
      let key = keys.get(tenant);
      if (!key) {
        key = createHmac('sha256', base).update(`toolgate-guardrails\u0000${tenant}`).digest();
        if (keys.size < 10_000) keys.set(tenant, key);
      }
      return key;
    },
  };
}
