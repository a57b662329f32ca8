import { Ajv, type ErrorObject } from 'ajv';
import Type, { type Static, type TSchema } from 'typebox';
import { errors } from '../errors.js';
import { didYouMean } from '../shared/did-you-mean.js';

// One compiler for every policy schema; `useDefaults` fills documented defaults into a copy of the options.
// ajv fills a property's default before it checks `required`, so an option with a default is written as a
// required property: the user may leave it out, and the type derived from the schema reads it as present.
// `verbose`: an unknown option is matched against the options its schema knows. `allErrors`: a typo
// (`limt`) is reported as the unknown option it is, not as the missing option it left out.
// `optimize: false`: a tenant's chain is compiled on its first request, and ajv's optimizer would leave a `{}`
// per generated name behind for V8's empty-object shape table (src/config/load.ts says why that costs).
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, verbose: true, code: { optimize: false } });
const compiled = new WeakMap<TSchema, ReturnType<Ajv['compile']>>();

function describe(policy: string, error: ErrorObject): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const key = error.keyword === 'additionalProperties' ? `${path ? `${path}.` : ''}${String(error.params.additionalProperty)}` : path;
  const where = key ? `policies.${policy}.${key}` : `policies.${policy}`;
  if (error.keyword !== 'additionalProperties') return `${where} ${error.message ?? 'is invalid'}`;
  const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const known = Object.keys(properties);
  const hint = didYouMean(String(error.params.additionalProperty), known) || (known.length > 0 ? `; known options: ${known.join(', ')}` : '');
  return `${where} is not a known option${hint}`;
}

/**
 * Validates a policy's options against its schema (written once, with TypeBox) when the chain is built,
 * so a bad config fails fast (TG_CONFIG_INVALID) with the offending key named, never at call time. The
 * answer is typed by the same schema.
 */
export function parsePolicyOptions<S extends TSchema>(policy: string, schema: S, raw: unknown): Static<S> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const options: unknown = raw === undefined || raw === true ? {} : structuredClone(raw);
  if (!validate(options)) {
    const found = validate.errors!;
    throw new errors.TG_CONFIG_INVALID(describe(policy, found.find((error) => error.keyword === 'additionalProperties') ?? found[0]!));
  }
  return options as Static<S>;
}

/**
 * An object of any keys whose values match `value` (tool name or glob → option), as JSON Schema's
 * `additionalProperties`: TypeBox's Record matches keys with a pattern, and its Object does not type the rest.
 */
export function stringMap<T extends TSchema>(value: T, options: { default?: Record<string, Static<T>> } = {}) {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...options });
}
