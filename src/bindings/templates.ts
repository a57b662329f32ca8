// Server-side argument templates (docs/security-model.md#bound-arguments): `${principal.tenant}`, `${principal.user}`, `${claims.NAME}`
// (NAME may be a dotted path into nested claims). Pure: no I/O, no config access. Only the templates from
// config are expanded — model arguments are never passed through here.
import type { JsonObject } from '../call/types.js';
import type { Principal } from '../call/principal.js';

export type BindingResult = { ok: true; value: JsonObject } | { ok: false; reason: string };

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const WHOLE = /^\$\{([^}]*)\}$/;
const CLAIM_PATH = /^claims\.([A-Za-z0-9_:-]+(?:\.[A-Za-z0-9_:-]+)*)$/;

class MissingValue extends Error {}

const hasOwn = (value: unknown, key: string): boolean =>
  value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, key);

/** Looks a placeholder up with own-property reads only, so `claims.__proto__` or `claims.constructor` never resolve. */
function lookup(expression: string, principal: Principal): unknown {
  if (expression === 'principal.tenant') return principal.tenant;
  if (expression === 'principal.user') return principal.user;
  const claim = CLAIM_PATH.exec(expression);
  if (!claim) throw new MissingValue(`unknown binding template \${${expression}}`);
  let value: unknown = principal.claims;
  for (const part of claim[1]!.split('.')) {
    if (!hasOwn(value, part)) throw new MissingValue(`the token has no claim ${claim[1]}`);
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined || value === null) throw new MissingValue(`the token has no claim ${claim[1]}`);
  return value;
}

function expandString(template: string, principal: Principal): unknown {
  const whole = WHOLE.exec(template);
  // A whole-string template keeps the claim's type (a groups array stays an array).
  if (whole) return lookup(whole[1]!, principal);
  return template.replace(PLACEHOLDER, (_match, expression: string) => {
    const value = lookup(expression, principal);
    if (typeof value === 'object') throw new MissingValue(`claim in \${${expression}} is not a scalar and cannot be embedded in a string`);
    return String(value);
  });
}

/** Defines an own property, so a key named `__proto__` stays data and never changes a prototype. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function expand(template: unknown, principal: Principal): unknown {
  if (typeof template === 'string') return expandString(template, principal);
  if (Array.isArray(template)) return template.map((item) => expand(item, principal));
  if (template !== null && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(template)) put(out, key, expand(value, principal));
    return out;
  }
  return template;
}

/** Expands every template in `bindings` for this principal; fails closed when any value is missing. */
export function resolveBindings(bindings: Readonly<JsonObject>, principal: Principal): BindingResult {
  try {
    return { ok: true, value: expand(bindings, principal) as JsonObject };
  } catch (error) {
    if (error instanceof MissingValue) return { ok: false, reason: error.message };
    throw error;
  }
}

/** The model's arguments with every bound top-level key replaced whole (never deep-merged: the model cannot add filter fields). */
export function applyBindings(args: Readonly<JsonObject>, bound: Readonly<JsonObject>): JsonObject {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) put(out, key, value);
  for (const [key, value] of Object.entries(bound)) put(out, key, value);
  return out;
}
