import type { JsonObject } from '../call/types.js';

/**
 * The schema a model sees: the tool's schema minus every server-bound key. With
 * `additionalProperties: false` a model-sent bound key then fails validation; otherwise bind-arguments
 * overwrites it. Either way the model's value is never trusted.
 */
export function visibleSchema(schema: Readonly<JsonObject>, boundKeys: readonly string[]): Readonly<JsonObject> {
  if (boundKeys.length === 0) return schema;
  const properties = schema.properties;
  const required = schema.required;
  const copy: JsonObject = { ...schema };
  if (properties && typeof properties === 'object' && !Array.isArray(properties)) {
    const kept: JsonObject = {};
    for (const [key, value] of Object.entries(properties)) if (!boundKeys.includes(key)) kept[key] = value;
    copy.properties = kept;
  }
  if (Array.isArray(required)) copy.required = required.filter((key) => !boundKeys.includes(String(key)));
  return Object.freeze(copy);
}
