// The bound metadata filter: checked before any search (defence in depth behind bind-arguments)
// and matched per document inside the search.
import { ToolError } from '../call/tool-error.js';
import type { FilterScalar, RagFilter } from './backend.js';

function isScalar(value: unknown): value is FilterScalar {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// A `${...}` left in a value means the binding was never resolved; searching with it would be a guess.
const UNRESOLVED_TEMPLATE = /\$\{[^}]*\}/;

function deny(message: string): never {
  throw new ToolError('PERMISSION_DENIED', `knowledge search refused: ${message}`);
}

/**
 * Returns the filter bound on the server, or throws PERMISSION_DENIED. Never returns "no filter" for a
 * filter that is missing, odd, or lacks a key the tool's config binds (`requiredKeys`).
 * The result is a fresh null-prototype copy, so later mutation of the arguments cannot change it.
 */
export function requireBoundFilter(value: unknown, requiredKeys: readonly string[]): RagFilter {
  if (!isPlainObject(value)) deny('no server-bound filter');
  const filter: Record<string, FilterScalar | readonly FilterScalar[]> = Object.create(null);
  for (const key of Object.keys(value)) {
    const raw = value[key];
    if (isScalar(raw)) {
      if (typeof raw === 'string' && UNRESOLVED_TEMPLATE.test(raw)) deny(`filter "${key}" was not resolved`);
      filter[key] = raw;
    } else if (Array.isArray(raw) && raw.every(isScalar)) {
      if (raw.some((item) => typeof item === 'string' && UNRESOLVED_TEMPLATE.test(item))) deny(`filter "${key}" was not resolved`);
      filter[key] = Object.freeze([...raw]);
    } else {
      deny(`filter "${key}" is not a string, number, boolean or list of them`);
    }
  }
  for (const key of requiredKeys) {
    if (!Object.hasOwn(filter, key)) deny(`filter "${key}" is not bound`);
  }
  return Object.freeze(filter);
}

function valueMatches(docValue: unknown, wanted: FilterScalar | readonly FilterScalar[]): boolean {
  const accepted: readonly FilterScalar[] = Array.isArray(wanted) ? wanted : [wanted as FilterScalar];
  // A document tagged with a list (e.g. several departments) matches when any of its values is accepted.
  const values: readonly unknown[] = Array.isArray(docValue) ? docValue : [docValue];
  return values.some((value) => isScalar(value) && accepted.includes(value));
}

/** True when every filter key is an own metadata key whose value is accepted (strict equality, no coercion). */
export function matchesFilter(metadata: Readonly<Record<string, unknown>>, filter: RagFilter): boolean {
  for (const key of Object.keys(filter)) {
    if (!Object.hasOwn(metadata, key)) return false;
    if (!valueMatches(metadata[key], filter[key]!)) return false;
  }
  return true;
}
