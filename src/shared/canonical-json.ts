import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level: equal values give equal text in any process.
 * Written out directly (no replacer, no sorted copies): it runs on every audited call, twice when the audit
 * chain is on (the arguments' digest and the event's link).
 */
export function canonicalJson(value: unknown): string {
  return serialize(value) ?? 'null';
}

/** One object layout: its keys sorted, each with its `"key":` prefix written once. */
interface SortedLayout {
  /** The keys in the order Object.keys gave them (checked on every hit, so a colliding id is harmless). */
  own: readonly string[];
  sorted: readonly string[];
  prefixes: readonly string[];
}

// Audit events and most arguments repeat a handful of layouts, and sorting their keys was most of the cost.
// Bounded: layouts come from callers' arguments too, so only small ones are kept and only up to a count.
const MAX_LAYOUTS = 256;
const MAX_LAYOUT_KEYS = 32;
const MAX_LAYOUT_ID_CHARS = 512;
const layouts = new Map<string, SortedLayout>();

function layoutOf(own: string[]): SortedLayout {
  if (own.length <= MAX_LAYOUT_KEYS) {
    // A cheap id (count, first and last key), not the joined keys: hashing a fresh joined string cost more than the
    // sort it saves. Layouts that share an id are told apart by the key-by-key check below (the later one uncached).
    const id = `${own.length}\u0000${own[0]}\u0000${own[own.length - 1]}`;
    if (id.length <= MAX_LAYOUT_ID_CHARS) {
      const known = layouts.get(id);
      if (known && sameKeys(known.own, own)) return known;
      const layout = sortedLayout(own);
      if (!known && layouts.size < MAX_LAYOUTS) layouts.set(id, layout);
      return layout;
    }
  }
  return sortedLayout(own);
}

function sortedLayout(own: string[]): SortedLayout {
  const sorted = [...own].sort();
  return { own, sorted, prefixes: sorted.map((key) => `${JSON.stringify(key)}:`) };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}

function serialize(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      // undefined, functions and symbols: dropped from objects, null in arrays (JSON.stringify's rules); bigint throws there too.
      return JSON.stringify(value);
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return serialize((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) text += `${index === 0 ? '' : ','}${serialize(value[index]) ?? 'null'}`;
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const { sorted, prefixes } = layoutOf(Object.keys(record));
  let text = '{';
  let first = true;
  for (let index = 0; index < sorted.length; index += 1) {
    const item = serialize(record[sorted[index]!]);
    if (item === undefined) continue;
    text += first ? prefixes[index] + item : `,${prefixes[index]}${item}`;
    first = false;
  }
  return `${text}}`;
}

// One-shot crypto.hash (Node ≥ 20.12): about a third of createHash().update().digest() for short inputs.
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
