import type { JsonObject } from '../call/types.js';

// OpenAI strict mode (Structured Outputs) takes a subset of JSON Schema: every object closed with
// `additionalProperties: false` and listing every property in `required` (an optional one made nullable),
// a root object, at most 10 levels of nesting and 5000 properties. Keywords outside the subset either
// only constrain values — those are dropped, since toolgate validates every call against the tool's real
// schema anyway — or change the shape, which strict mode cannot express: such a tool stays non-strict.

/** Kept as they are (annotations, and the constraints strict mode enforces). */
const KEPT = new Set([
  'type', 'description', 'title', 'enum', 'const', 'pattern', 'format', 'multipleOf', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'maxItems', '$ref',
]);
/** Value constraints and annotations strict mode does not take: dropped (validation still applies them). */
const DROPPED = new Set([
  'default', 'examples', 'example', '$schema', '$id', '$comment', 'minLength', 'maxLength', 'uniqueItems', 'minProperties',
  'maxProperties', 'readOnly', 'writeOnly', 'deprecated', 'contentEncoding', 'contentMediaType', 'nullable',
]);
/** Handled below: they nest schemas. Any other keyword (allOf, oneOf, not, if, patternProperties…) makes the tool non-strict. */
const NESTING = new Set(['properties', 'required', 'additionalProperties', 'items', 'anyOf', '$defs', 'definitions']);
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const MAX_DEPTH = 10;
const MAX_PROPERTIES = 5000;

class NotStrict extends Error {}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The tool's parameter schema in strict-mode form, or undefined when strict mode cannot express it
 * (an open or free-form object, a tuple, allOf/oneOf/not/if…, too deep or too large): list that tool with `strict: false`.
 */
export function strictSchema(schema: Readonly<JsonObject>): JsonObject | undefined {
  if (schema.type !== 'object' || schema.anyOf !== undefined) return undefined;
  const budget = { properties: 0 };
  try {
    return convert(schema, 0, budget, true);
  } catch (error) {
    if (error instanceof NotStrict) return undefined;
    throw error;
  }
}

function convert(schema: Readonly<JsonObject>, depth: number, budget: { properties: number }, root = false): JsonObject {
  if (depth > MAX_DEPTH) throw new NotStrict();
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) {
      if (key !== 'format' || (typeof value === 'string' && FORMATS.has(value))) out[key] = value;
    } else if (!DROPPED.has(key) && !NESTING.has(key)) {
      throw new NotStrict();
    }
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = schema[key];
    if (defs === undefined) continue;
    if (!isObject(defs)) throw new NotStrict();
    out[key] = Object.fromEntries(Object.entries(defs).map(([name, def]) => [name, convert(asSchema(def), depth + 1, budget)]));
  }
  if (schema.anyOf !== undefined) {
    if (!Array.isArray(schema.anyOf)) throw new NotStrict();
    out.anyOf = schema.anyOf.map((branch) => convert(asSchema(branch), depth + 1, budget));
  }
  if (schema.items !== undefined) {
    if (!isObject(schema.items)) throw new NotStrict(); // a tuple
    out.items = convert(schema.items, depth + 1, budget);
  }
  const isObjectType = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object')) || schema.properties !== undefined;
  if (isObjectType) Object.assign(out, closedObject(schema, depth, budget, root));
  return out;
}

function closedObject(schema: Readonly<JsonObject>, depth: number, budget: { properties: number }, root: boolean): JsonObject {
  const properties = schema.properties ?? {};
  if (!isObject(properties)) throw new NotStrict();
  const names = Object.keys(properties);
  // Open objects (any extra key allowed, or a schema for extra keys) cannot be closed without changing what they
  // mean; a nested object without properties is free-form. A root without properties is a tool without arguments.
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) throw new NotStrict();
  if (names.length === 0 && extra === undefined && !root) throw new NotStrict();
  budget.properties += names.length;
  if (budget.properties > MAX_PROPERTIES) throw new NotStrict();
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const converted: JsonObject = {};
  for (const name of names) {
    const property = convert(asSchema(properties[name]), depth + 1, budget);
    converted[name] = required.has(name) ? property : nullable(property);
  }
  return { properties: converted, required: names, additionalProperties: false };
}

/** An optional property as strict mode spells it: required, with null allowed. */
function nullable(schema: JsonObject): JsonObject {
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema = { ...schema, enum: [...schema.enum, null] };
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  if (schema.enum !== undefined) return schema;
  // $ref, const or a bare schema: one more branch.
  const { description, ...rest } = schema;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
}

function asSchema(value: unknown): JsonObject {
  // `true` (anything) cannot be strict; `false` never matches, nothing a model could send.
  if (!isObject(value)) throw new NotStrict();
  return value;
}

/**
 * A strict-mode model sends `null` for an optional property it means to leave out. When the tool's own schema
 * does not take that null, the call is retried with such properties removed (recursively through nested
 * objects and arrays); returns `args` itself when nothing was removed.
 */
export function withoutNullOptionals(schema: Readonly<JsonObject>, args: JsonObject): JsonObject {
  return stripNulls(schema, args, 0) as JsonObject;
}

const takesNull = (schema: JsonObject): boolean =>
  schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null')) || (Array.isArray(schema.enum) && schema.enum.includes(null));

function stripNulls(schema: Readonly<JsonObject>, value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value) && isObject(schema.items)) {
    const items = schema.items;
    const mapped = value.map((item) => stripNulls(items, item, depth + 1));
    return mapped.some((item, index) => item !== value[index]) ? mapped : value;
  }
  if (!isObject(value) || !isObject(schema.properties)) return value;
  const properties = schema.properties;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  let copy: JsonObject | undefined;
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key];
    if (!isObject(property)) continue;
    const next = item === null && !required.has(key) && !takesNull(property) ? undefined : stripNulls(property, item, depth + 1);
    if (next === item) continue;
    copy ??= { ...value };
    if (next === undefined) delete copy[key];
    else copy[key] = next;
  }
  return copy ?? value;
}
