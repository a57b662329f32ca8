import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonObject } from '../types.js';

// ajv-formats is CommonJS: under NodeNext the default import is its `module.exports`, which carries the
// plugin as `.default` too (typed so).
const addFormats = addFormatsModule.default;

export type SchemaCheck = { ok: true } | { ok: false; message: string };

type Check = (args: JsonObject) => SchemaCheck;

/** The answer for valid arguments: one shared object (this runs on every call). */
const VALID: SchemaCheck = Object.freeze({ ok: true });

/**
 * Compiles each model-visible schema once (cached by schema object identity). Upstream schemas
 * are untrusted: `addUsedSchema: false` keeps their `$id`s from colliding, and a schema that does not
 * compile only loses schema validation (the object check already passed) — it is logged by the caller.
 */
export function createSchemaValidator(): (schema: Readonly<JsonObject>) => Check | undefined {
  const ajv = new Ajv({ allErrors: false, strict: false, addUsedSchema: false, validateSchema: false, coerceTypes: false });
  addFormats(ajv);
  // The check itself is cached per schema too, not only the compiled validator: no closure per call.
  const cache = new WeakMap<object, Check | null>();
  return (schema) => {
    let check = cache.get(schema);
    if (check === undefined) {
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(schema as JsonObject);
        check = (args) => (validate(args) ? VALID : { ok: false, message: describeErrors(validate.errors ?? []) });
      } catch {
        check = null;
      }
      cache.set(schema, check);
    }
    return check ?? undefined;
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
