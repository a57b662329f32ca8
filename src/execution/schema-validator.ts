import { Ajv, type CodeOptions, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { compileLinear, isRefusal, MatchBudgetError, MAX_PATTERN_LENGTH } from '../patterns/linear-regex.js';
import type { JsonObject } from '../call/types.js';

// ajv-formats is CommonJS: under NodeNext the default import is its `module.exports`, which carries the
// plugin as `.default` too (typed so).
const addFormats = addFormatsModule.default;

export type SchemaCheck = { ok: true } | { ok: false; message: string };

type Check = (args: JsonObject) => SchemaCheck;

/** The answer for valid arguments: one shared object (this runs on every call). */
const VALID: SchemaCheck = Object.freeze({ ok: true });

/** A schema pattern the linear-time engine cannot run: the schema does not compile, and its calls are refused. */
class PatternRefusedError extends Error {}

/**
 * ajv's `code.regExp` hook: every `pattern` and `patternProperties` of a tool schema runs on the
 * linear-time engine (docs/security-model.md#untrusted-patterns-and-schemas), never on V8's backtracking one.
 */
const linearRegExp: NonNullable<CodeOptions['regExp']> = Object.assign(
  (pattern: string) => {
    const compiled = compileLinear(pattern);
    if (isRefusal(compiled)) throw new PatternRefusedError(`the schema's pattern ${JSON.stringify(pattern)} cannot be used: ${compiled.reason}`);
    return compiled;
  },
  { code: 'linearRegExp' },
);

/**
 * `format: "regex"` asks whether a value is a regular expression: ajv-formats answers by compiling the value
 * with V8, which took seconds for a 1 MB value. The value is only parsed, never run, so a length bound
 * (the one patterns from outside the code have) keeps that parse short.
 */
function isBoundedRegex(value: string): boolean {
  if (value.length > MAX_PATTERN_LENGTH) return false;
  try {
    new RegExp(value, 'u');
    return true;
  } catch {
    return false;
  }
}

/**
 * Compiles each model-visible schema once (cached by schema object identity). Upstream schemas
 * are untrusted: `addUsedSchema: false` keeps their `$id`s from colliding, and a schema that does not
 * compile only loses schema validation (the object check already passed) — it is logged by the caller.
 * The exception is a pattern the linear-time engine refuses (defineTool takes those out, so only one
 * it cannot find, e.g. behind an odd `$ref`, gets here): then every call is refused, never run unchecked.
 */
export function createSchemaValidator(): (schema: Readonly<JsonObject>) => Check | undefined {
  const ajv = new Ajv({ allErrors: false, strict: false, addUsedSchema: false, validateSchema: false, coerceTypes: false, code: { regExp: linearRegExp } });
  addFormats(ajv);
  ajv.addFormat('regex', isBoundedRegex);
  // The check itself is cached per schema too, not only the compiled validator: no closure per call.
  const cache = new WeakMap<object, Check | null>();
  return (schema) => {
    let check = cache.get(schema);
    if (check === undefined) {
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(schema as JsonObject);
        check = (args) => {
          try {
            return validate(args) ? VALID : { ok: false, message: describeErrors(validate.errors ?? []) };
          } catch (error) {
            if (error instanceof MatchBudgetError) return { ok: false, message: error.message };
            throw error;
          }
        };
      } catch (error) {
        const refused: SchemaCheck | null = error instanceof PatternRefusedError ? { ok: false, message: error.message } : null;
        check = refused && (() => refused);
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
