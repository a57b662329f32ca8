import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonObject } from '../types.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped in `.default`.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

export type SchemaCheck = { ok: true } | { ok: false; message: string };

/**
 * Compiles each model-visible schema once (cached by schema object identity). Upstream schemas
 * are untrusted: `addUsedSchema: false` keeps their `$id`s from colliding, and a schema that does not
 * compile only loses schema validation (the object check already passed) — it is logged by the caller.
 */
export function createSchemaValidator(): (schema: Readonly<JsonObject>) => ((args: JsonObject) => SchemaCheck) | undefined {
  const ajv = new Ajv({ allErrors: false, strict: false, addUsedSchema: false, validateSchema: false, coerceTypes: false });
  addFormats(ajv);
  const cache = new WeakMap<object, ValidateFunction | null>();
  return (schema) => {
    let compiled = cache.get(schema);
    if (compiled === undefined) {
      try {
        compiled = ajv.compile(schema as JsonObject);
      } catch {
        compiled = null;
      }
      cache.set(schema, compiled);
    }
    if (compiled === null) return undefined;
    const validate = compiled;
    return (args) => (validate(args) ? { ok: true } : { ok: false, message: describeErrors(validate.errors ?? []) });
  };
}

function describeErrors(errors: readonly ErrorObject[]): string {
  const first = errors[0];
  if (!first) return 'arguments are invalid';
  const field = first.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
  if (first.keyword === 'required') return `missing required field "${String(first.params.missingProperty)}"`;
  if (first.keyword === 'additionalProperties') return `unexpected field "${String(first.params.additionalProperty)}"${field ? ` in "${field}"` : ''}`;
  return `field "${field || '(root)'}" ${first.message ?? 'is invalid'}`;
}
