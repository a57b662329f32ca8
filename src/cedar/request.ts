// What a Cedar request is made of for toolgate (docs/governance.md#cedar-entity-model): the principal and
// the tool, resource or prompt as entities, and the context. Only what the tenant's schema declares is handed
// over, each value checked against its declared type and bounded (src/cedar/limits.ts): a 1 MB or deeply
// nested argument reaches Cedar as nothing, or as a short value, never whole.
import type { CedarConfig } from '../config/types.js';
import type { JsonObject, Tool } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { MAX_ARGUMENT_SET_ELEMENTS, MAX_ARGUMENT_STRING_CHARS } from './limits.js';
import type { ArgumentType } from './schema.js';
import type { CedarWasm } from './wasm.js';

type Value = CedarWasm.CedarValueJson;
type ClaimType = CedarConfig['claims'][string];

/** Roles handed over per principal (a token with more is cut; roles beyond are not seen by policies). */
const MAX_ROLES = 64;

function scalarOf(type: string, value: unknown): Value | undefined {
  switch (type) {
    case 'String':
      return typeof value === 'string' && value.length <= MAX_ARGUMENT_STRING_CHARS ? value : undefined;
    case 'Long':
      return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
    case 'Boolean':
      return typeof value === 'boolean' ? value : undefined;
    default:
      return undefined;
  }
}

/**
 * The value as Cedar gets it, or undefined when it is not of the declared type (a fraction for a Long, a
 * string over the cap, a set with a stray element): then the attribute is absent, and a policy reading it
 * errors — an errored `forbid` refuses the call (src/cedar/engine.ts).
 */
export function cedarValue(type: ArgumentType | ClaimType, value: unknown): Value | undefined {
  if (!type.startsWith('Set<')) return scalarOf(type, value);
  if (!Array.isArray(value) || value.length > MAX_ARGUMENT_SET_ELEMENTS) return undefined;
  const element = type.slice(4, -1);
  const out: Value[] = [];
  for (const item of value) {
    const converted = scalarOf(element, item);
    if (converted === undefined) return undefined;
    out.push(converted);
  }
  return out;
}

/** The call's arguments as the schema declares them; nothing else of them is read. */
export function argumentsRecord(types: ReadonlyMap<string, ArgumentType>, args: JsonObject): Record<string, Value> {
  const out: Record<string, Value> = {};
  // Over the call's own keys when there are fewer of them than declared names: the work is bounded by both.
  const keys = Object.keys(args);
  if (keys.length < types.size) {
    for (const key of keys) {
      const type = types.get(key);
      const value = type === undefined ? undefined : cedarValue(type, args[key]);
      if (value !== undefined) out[key] = value;
    }
    return out;
  }
  for (const [key, type] of types) {
    const value = Object.hasOwn(args, key) ? cedarValue(type, args[key]) : undefined;
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** Request time as policies read it (UTC). */
export function timeRecord(now: number): Record<string, Value> {
  const date = new Date(now);
  return { epochSeconds: Math.floor(now / 1000), weekday: date.getUTCDay(), hour: date.getUTCHours(), minute: date.getUTCMinutes() };
}

export const userUid = (principal: Principal): CedarWasm.EntityUidJson => ({ type: 'User', id: principal.user });
export const toolUid = (name: string): CedarWasm.EntityUidJson => ({ type: 'Tool', id: name });

/** The principal entity: tenant, roles and the claims the operator exposes, typed as declared. */
export function userEntity(principal: Principal, claims: CedarConfig['claims']): CedarWasm.EntityJson {
  const exposed: Record<string, Value> = {};
  for (const [name, type] of Object.entries(claims)) {
    const value = Object.hasOwn(principal.claims, name) ? cedarValue(type, principal.claims[name]) : undefined;
    if (value !== undefined) exposed[name] = value;
  }
  return { uid: userUid(principal), attrs: { tenant: principal.tenant, roles: principal.roles.slice(0, MAX_ROLES), claims: exposed }, parents: [] };
}

export function toolEntity(tool: Tool): CedarWasm.EntityJson {
  return {
    uid: toolUid(tool.name),
    attrs: { name: tool.name, source: tool.source, service: tool.service ?? '', readOnly: tool.readOnly, destructive: tool.destructive },
    parents: [],
  };
}
