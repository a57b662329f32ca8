// OpenAPI Schema Objects (3.0's dialect, or 3.1's JSON Schema 2020-12) → the draft-07 JSON Schema the
// gateway validates arguments with. Only keywords ajv knows are kept, so every generated schema
// compiles under ajv's strict mode; the OpenAPI-only ones are translated (nullable, boolean
// exclusiveMinimum/Maximum) or dropped (discriminator, xml, example, x-…).
import { defineOwn, isObject } from './document.js';
import type { JsonObject } from '../call/types.js';

/** Keywords copied as they are (values that are not schemas). */
const PLAIN = new Set([
  'title', 'description', 'default', 'enum', 'const', 'multipleOf', 'maximum', 'minimum', 'maxLength', 'minLength',
  'maxItems', 'minItems', 'uniqueItems', 'maxProperties', 'minProperties', 'required', 'deprecated', 'writeOnly',
]);
/** Keywords whose value is one schema. */
const SUBSCHEMA = new Set(['not', 'contains', 'propertyNames', 'if', 'then', 'else', 'additionalItems']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP = new Set(['properties', 'patternProperties']);
/** Branch keywords: their schema is read together with the schema around it. */
const BRANCH = new Set(['not', 'if', 'then', 'else']);
const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames', 'minProperties', 'maxProperties'];
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/** The formats ajv-formats defines (OpenAPI's int32, int64, float, double, byte, binary, password included). */
const KNOWN_FORMATS = new Set([
  'date', 'time', 'date-time', 'iso-time', 'iso-date-time', 'duration', 'uri', 'uri-reference', 'uri-template', 'url', 'email',
  'hostname', 'ipv4', 'ipv6', 'regex', 'uuid', 'json-pointer', 'json-pointer-uri-fragment', 'relative-json-pointer', 'byte',
  'int32', 'int64', 'float', 'double', 'password', 'binary',
]);

/** An open schema: what a recursive (`$ref` left by the parser) or unusable part becomes. */
const OPEN: JsonObject = Object.freeze({});

function typeOf(schema: JsonObject): string[] | undefined {
  const raw = schema.type;
  const list = Array.isArray(raw) ? raw : raw === undefined ? undefined : [raw];
  if (!list) return undefined;
  const kept = [...new Set(list.filter((type): type is string => typeof type === 'string' && TYPES.has(type)))];
  return kept.length > 0 ? kept : undefined;
}

export interface SchemaConverter {
  /** A request-side schema: properties marked readOnly are left out (the server sets them). */
  convert(schema: unknown): JsonObject;
}

/**
 * One converter per document: results are memoised by source object, so a component the parser
 * shared between a hundred operations is converted once and shared again (memory stays bounded).
 */
export function createSchemaConverter(): SchemaConverter {
  const done = new WeakMap<object, JsonObject>();
  const doneBranch = new WeakMap<object, JsonObject>();
  const inProgress = new WeakSet<object>();
  // Converted schemas whose source said `readOnly: true` (the keyword itself is not emitted).
  const readOnlySchemas = new WeakSet<object>();

  /**
   * `branch`: the schema is an allOf/anyOf/oneOf/not/if/then/else branch and takes its type from the
   * schema around it; a standalone schema with object keywords and no type gets `type: object`.
   */
  function convert(schema: unknown, branch = false): JsonObject {
    if (schema === true || schema === undefined) return OPEN;
    if (schema === false) return { not: {} };
    if (!isObject(schema)) return OPEN;
    const memo = branch ? doneBranch : done;
    const cached = memo.get(schema);
    if (cached) return cached;
    // A cycle the parser left as object references (it should not, with circular: 'ignore'): open it.
    if (inProgress.has(schema) || typeof schema.$ref === 'string') return OPEN;
    inProgress.add(schema);
    const out = convertObject(schema, branch);
    if (schema.readOnly === true) readOnlySchemas.add(out);
    inProgress.delete(schema);
    memo.set(schema, out);
    return out;
  }

  function convertObject(schema: JsonObject, branch: boolean): JsonObject {
    const out: JsonObject = {};
    let types = typeOf(schema);
    for (const [key, value] of Object.entries(schema)) {
      if (PLAIN.has(key)) out[key] = value;
      else if (SUBSCHEMA.has(key)) out[key] = convert(value, BRANCH.has(key));
      else if (SCHEMA_LIST.has(key) && Array.isArray(value) && value.length > 0) out[key] = value.map((item) => convert(item, true));
      else if (key === 'items') out[key] = Array.isArray(value) ? value.map((item) => convert(item)) : convert(value);
      else if (key === 'prefixItems' && Array.isArray(value)) out.items = value.map((item) => convert(item)); // 2020-12 tuple → draft-07
      else if (key === 'additionalProperties') out[key] = typeof value === 'boolean' ? value : convert(value);
      else if (SCHEMA_MAP.has(key) && isObject(value)) out[key] = convertMap(value);
      // Patterns are kept as written: every tool schema's patterns run on the linear-time engine, and
      // defineTool takes out (and notes) one it cannot run (docs/security-model.md#untrusted-patterns-and-schemas).
      else if (key === 'pattern' && typeof value === 'string') out[key] = value;
      else if (key === 'format' && typeof value === 'string' && KNOWN_FORMATS.has(value)) out[key] = value;
    }
    if (schema.nullable === true && types && !types.includes('null')) {
      types = [...types, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
    // Under ajv's strictTypes an object keyword needs a known object type.
    if (!types && !branch && OBJECT_KEYWORDS.some((keyword) => keyword in out)) types = ['object'];
    if (types) out.type = types.length === 1 ? types[0] : types;
    else delete out.type;
    // OpenAPI 3.0 spells exclusive bounds as booleans beside minimum/maximum; draft-07 as numbers.
    for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
      const value = schema[exclusive];
      if (typeof value === 'number') out[exclusive] = value;
      else if (value === true && typeof schema[bound] === 'number') {
        out[exclusive] = schema[bound];
        delete out[bound];
      }
    }
    dropReadOnly(out);
    if (Array.isArray(out.required)) {
      const required = [...new Set(out.required.filter((name): name is string => typeof name === 'string'))];
      if (required.length > 0) out.required = required;
      else delete out.required;
      // A required name defined elsewhere (a sibling branch, the schema around it) is declared here as
      // "any value", as ajv's strictRequired wants; with no additionalProperties: false this changes nothing.
      const properties = isObject(out.properties) ? out.properties : {};
      const missing = required.filter((name) => !Object.hasOwn(properties, name));
      if (missing.length > 0 && out.additionalProperties !== false) {
        const completed: JsonObject = { ...properties };
        for (const name of missing) defineOwn(completed, name, OPEN);
        out.properties = completed;
      }
    }
    return out;
  }

  function convertMap(value: JsonObject): JsonObject {
    const out: JsonObject = {};
    for (const [name, sub] of Object.entries(value)) {
      defineOwn(out, name, convert(sub));
    }
    return out;
  }

  /** Request schemas: properties the server marks readOnly are not the caller's to send. */
  function dropReadOnly(out: JsonObject): void {
    const properties = out.properties;
    if (!isObject(properties)) return;
    const readOnly = Object.entries(properties).filter(([, sub]) => isObject(sub) && readOnlySchemas.has(sub)).map(([name]) => name);
    if (readOnly.length === 0) return;
    const kept: JsonObject = {};
    for (const [name, sub] of Object.entries(properties)) if (!readOnly.includes(name)) defineOwn(kept, name, sub);
    out.properties = kept;
    if (Array.isArray(out.required)) out.required = out.required.filter((name) => !readOnly.includes(String(name)));
  }

  return { convert };
}
