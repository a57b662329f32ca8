// Tool schemas come from upstreams, documents and modules: their `pattern`s and `patternProperties` run on
// the linear-time engine (docs/security-model.md#untrusted-patterns-and-schemas). A pattern that engine
// refuses is taken out of the schema before anyone sees it, so the schema a model is shown is exactly the
// one the gateway checks; a `$comment` beside it says what was taken out and why.
import type { JsonObject } from '../call/types.js';
import { compileLinear, isRefusal } from './linear-regex.js';

/** Keywords whose value is one schema. */
const ONE = ['additionalProperties', 'additionalItems', 'items', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties'];
/** Keywords whose value is a list of schemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'items', 'prefixItems'];
/** Keywords whose value maps names to schemas. */
const MAP = ['properties', 'definitions', '$defs', 'dependentSchemas', 'dependencies'];
/** Deeper schemas are left to the validator, which refuses (fails closed) on any pattern it cannot run. */
const MAX_DEPTH = 64;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

function refusalOf(pattern: string): string | undefined {
  const compiled = compileLinear(pattern);
  return isRefusal(compiled) ? compiled.reason : undefined;
}

/** A copy of `object` with `key` set, keeping own-property semantics for names like `__proto__`. */
function withKey(object: JsonObject, key: string, value: unknown): JsonObject {
  const copy: JsonObject = { ...object };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function note(schema: JsonObject, notes: readonly string[]): JsonObject {
  const existing = typeof schema.$comment === 'string' && schema.$comment ? `${schema.$comment}\n` : '';
  return { ...schema, $comment: `${existing}${notes.join('\n')}` };
}

function clean(schema: unknown, depth: number): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return schema;
  let out = schema;
  const notes: string[] = [];
  if (typeof schema.pattern === 'string') {
    const reason = refusalOf(schema.pattern);
    if (reason !== undefined) {
      const { pattern, ...rest } = out;
      out = rest;
      notes.push(`pattern ${JSON.stringify(pattern)} is not checked by the gateway: ${reason}`);
    }
  }
  if (isObject(schema.patternProperties)) {
    let changed = false;
    const kept: JsonObject = {};
    for (const [pattern, sub] of Object.entries(schema.patternProperties)) {
      const reason = refusalOf(pattern);
      if (reason !== undefined) {
        changed = true;
        notes.push(`patternProperties ${JSON.stringify(pattern)} is not checked by the gateway: ${reason}`);
        continue;
      }
      const next = clean(sub, depth + 1);
      if (next !== sub) changed = true;
      Object.defineProperty(kept, pattern, { value: next, enumerable: true, writable: true, configurable: true });
    }
    if (changed) out = withKey(out, 'patternProperties', kept);
  }
  for (const key of ONE) {
    const sub = out[key];
    if (!isObject(sub)) continue;
    const next = clean(sub, depth + 1);
    if (next !== sub) out = withKey(out, key, next);
  }
  for (const key of LIST) {
    const list = out[key];
    if (!Array.isArray(list)) continue;
    const next = list.map((sub) => clean(sub, depth + 1));
    if (next.some((sub, i) => sub !== list[i])) out = withKey(out, key, next);
  }
  for (const key of MAP) {
    const map = out[key];
    if (!isObject(map)) continue;
    let changed = false;
    const kept: JsonObject = {};
    for (const [name, sub] of Object.entries(map)) {
      const next = clean(sub, depth + 1);
      if (next !== sub) changed = true;
      Object.defineProperty(kept, name, { value: next, enumerable: true, writable: true, configurable: true });
    }
    if (changed) out = withKey(out, key, kept);
  }
  return notes.length > 0 ? note(out, notes) : out;
}

/**
 * The schema without the patterns the linear-time engine refuses (the same object when there are none).
 * Each removal is noted in a `$comment` at the place it was made.
 */
export function withRunnablePatterns(schema: JsonObject): JsonObject {
  return clean(schema, 0) as JsonObject;
}
