import type { JsonObject } from '../call/types.js';

// Gemini's function declarations take `parameters` as its own Schema object (an OpenAPI 3.0 subset, see
// `Schema` in @google/genai): upper-case types, `nullable` instead of a null type, `anyOf` as the only
// combinator, string enums, integer limits as strings, no `additionalProperties`, `$ref`, `const`, `oneOf`
// or `allOf`. The model sees this narrower schema; every call is still validated against the tool's own.

export type GeminiType = 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN' | 'ARRAY' | 'OBJECT' | 'NULL';

export interface GeminiSchema {
  type?: GeminiType;
  description?: string;
  title?: string;
  nullable?: boolean;
  enum?: string[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: string;
  maxLength?: string;
  minItems?: string;
  maxItems?: string;
  minProperties?: string;
  maxProperties?: string;
  items?: GeminiSchema;
  properties?: Record<string, GeminiSchema>;
  required?: string[];
  propertyOrdering?: string[];
  anyOf?: GeminiSchema[];
}

const TYPES: Readonly<Record<string, GeminiType>> = {
  string: 'STRING', number: 'NUMBER', integer: 'INTEGER', boolean: 'BOOLEAN', array: 'ARRAY', object: 'OBJECT', null: 'NULL',
};
/** The `format` values Gemini documents (others are refused by the API): by type. */
const FORMATS: Readonly<Partial<Record<GeminiType, readonly string[]>>> = { STRING: ['enum', 'date-time'], INTEGER: ['int32', 'int64'], NUMBER: ['float', 'double'] };
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const;
/**
 * `$ref`s are inlined; a recursive one, a chain deeper than this, or anything past the node budget becomes an
 * untyped schema, so a hostile upstream schema (references that fan out) costs bounded work.
 */
const MAX_DEPTH = 16;
const MAX_NODES = 2000;

interface Walk {
  root: Readonly<JsonObject>;
  nodes: number;
  refs: string[];
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A tool's parameter schema for a Gemini function declaration; undefined for a tool without parameters. */
export function geminiParameters(schema: Readonly<JsonObject>): GeminiSchema | undefined {
  const converted = convert(schema, { root: schema, nodes: 0, refs: [] }, 0);
  return converted.properties === undefined || Object.keys(converted.properties).length === 0 ? undefined : converted;
}

function convert(schema: Readonly<JsonObject>, walk: Walk, depth: number): GeminiSchema {
  if (depth > MAX_DEPTH || ++walk.nodes > MAX_NODES) return {};
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    const target = walk.refs.includes(ref) ? undefined : resolveRef(ref, walk.root);
    walk.refs.push(ref);
    const inlined = target ? convert(target, walk, depth + 1) : {};
    walk.refs.pop();
    return typeof schema.description === 'string' ? { ...inlined, description: schema.description } : inlined;
  }
  const out: GeminiSchema = {};
  if (typeof schema.title === 'string') out.title = schema.title;
  if (typeof schema.description === 'string') out.description = schema.description;

  const types = (Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type]).filter((type): type is string => typeof type === 'string');
  // Known types only, each once: a hostile `type` array (thousands of entries) must not fan out into branches.
  const nonNull = [...new Set(types.filter((type) => type !== 'null' && Object.hasOwn(TYPES, type)))];
  if (types.includes('null') || (Array.isArray(schema.enum) && schema.enum.includes(null))) out.nullable = true;
  const branches = [...arrayOf(schema.anyOf), ...arrayOf(schema.oneOf)];
  if (nonNull.length > 1) {
    // ["string", "integer"]: one branch per type, each with the keywords that apply to it.
    out.anyOf = nonNull.map((type) => convert({ ...schema, type, anyOf: undefined, oneOf: undefined, description: undefined, title: undefined }, walk, depth + 1));
    return out;
  }
  const type = nonNull.length === 1 ? TYPES[nonNull[0] as string] : schema.properties !== undefined ? 'OBJECT' : undefined;
  if (type) out.type = type;
  if (branches.length > 0) {
    const converted = branches.filter(isObject).map((branch) => convert(branch, walk, depth + 1));
    const nullBranch = converted.findIndex((branch) => branch.type === 'NULL');
    if (nullBranch >= 0) out.nullable = true;
    const rest = converted.filter((branch) => branch.type !== 'NULL');
    if (rest.length === 1 && out.type === undefined) Object.assign(out, rest[0], out.description ? { description: out.description } : {});
    else if (rest.length > 0) out.anyOf = rest;
  }
  // allOf of one schema (a common way to attach a description to a $ref) is that schema.
  const allOf = arrayOf(schema.allOf).filter(isObject);
  if (allOf.length === 1 && allOf[0]) Object.assign(out, convert(allOf[0], walk, depth + 1), out.description ? { description: out.description } : {});

  const values = Array.isArray(schema.enum) ? schema.enum : schema.const !== undefined ? [schema.const] : undefined;
  if (values && values.every((value) => typeof value === 'string' || value === null)) {
    out.enum = values.filter((value): value is string => typeof value === 'string');
    out.type ??= 'STRING';
  }
  if (typeof schema.format === 'string' && out.type && FORMATS[out.type]?.includes(schema.format)) out.format = schema.format;
  if (typeof schema.pattern === 'string') out.pattern = schema.pattern;
  if (typeof schema.minimum === 'number') out.minimum = schema.minimum;
  if (typeof schema.maximum === 'number') out.maximum = schema.maximum;
  for (const key of COUNTS) {
    const value = schema[key];
    if (typeof value === 'number' && Number.isInteger(value)) out[key] = String(value); // int64 travels as a string
  }
  if (isObject(schema.items)) out.items = convert(schema.items, walk, depth + 1);
  else if (out.type === 'ARRAY') out.items = {};
  if (isObject(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).filter(([, value]) => isObject(value)).map(([name, value]) => [name, convert(value as JsonObject, walk, depth + 1)]));
    const names = Object.keys(out.properties);
    const known = new Set(names);
    const required = arrayOf(schema.required).filter((name): name is string => typeof name === 'string' && known.has(name));
    if (required.length > 0) out.required = required;
    if (names.length > 1) out.propertyOrdering = names;
  }
  return out;
}

/** A local reference (`#/$defs/x`, `#/definitions/x`, any JSON pointer into the tool's schema). */
function resolveRef(ref: string, root: Readonly<JsonObject>): JsonObject | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    if (node === undefined) return undefined;
  }
  return isObject(node) ? node : undefined;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
