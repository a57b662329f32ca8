import { Ajv, type ErrorObject } from 'ajv';
import { errors } from '../errors.js';
import type { JsonObject } from '../types.js';

// One compiler for every policy schema; `useDefaults` fills documented defaults into a copy of the options.
const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: true, strictRequired: false });
const compiled = new WeakMap<object, ReturnType<Ajv['compile']>>();

function describe(policy: string, error: ErrorObject): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const key = error.keyword === 'additionalProperties' ? `${path ? `${path}.` : ''}${String(error.params.additionalProperty)}` : path;
  const where = key ? `policies.${policy}.${key}` : `policies.${policy}`;
  return error.keyword === 'additionalProperties' ? `${where} is not a known option` : `${where} ${error.message ?? 'is invalid'}`;
}

/**
 * Validates a policy's options against its schema when the chain is built, so a bad config fails fast
 * (TG_CONFIG_INVALID) with the offending key named, never at call time.
 */
export function parsePolicyOptions<T>(policy: string, schema: JsonObject, raw: unknown): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const options = raw === undefined || raw === true ? {} : structuredClone(raw);
  if (!validate(options)) throw new errors.TG_CONFIG_INVALID(describe(policy, validate.errors![0]!));
  return options as T;
}
