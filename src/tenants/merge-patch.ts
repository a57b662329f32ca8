import type { JsonObject } from '../call/types.js';

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * JSON Merge Patch (RFC 7396): objects merge key by key, `null` removes a key, anything else (arrays
 * included) replaces. `target` is not changed; keys are defined as own data properties, so a key named
 * `__proto__` can never reach a prototype.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = {};
  if (isObject(target)) for (const [key, value] of Object.entries(target)) define(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else define(result, key, applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}

function define(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
