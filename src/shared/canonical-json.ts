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
  const sorted = own.slice();
  // Plain loops where sort() and map() were: Node 20's V8 aborted twice under the Cedar bench with those, a cause
  // later found in how Cedar's Wasm is called (src/cedar/wasm.ts). Insertion sort by UTF-16 code units (what
  // sort() with no comparator does) for a layout of cacheable size, sort() past it.
  if (sorted.length > MAX_LAYOUT_KEYS) sorted.sort();
  else for (let index = 1; index < sorted.length; index += 1) {
    const key = sorted[index]!;
    let at = index - 1;
    while (at >= 0 && sorted[at]! > key) {
      sorted[at + 1] = sorted[at]!;
      at -= 1;
    }
    sorted[at + 1] = key;
  }
  const prefixes: string[] = [];
  for (const key of sorted) prefixes.push(`${JSON.stringify(key)}:`);
  return { own, sorted, prefixes };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}

function serialize(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return serialize((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) text += `${index === 0 ? '' : ','}${serialize(value[index]) ?? 'null'}`;
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const { sorted, prefixes } = layoutOf(Object.keys(record));
  const parts: string[] = [];
  for (let index = 0; index < sorted.length; index += 1) {
    const item = serialize(record[sorted[index]!]);
    if (item !== undefined) parts.push(prefixes[index] + item);
  }
  return `{${parts.join(',')}}`;
}

// One-shot crypto.hash (Node ≥ 20.12): about a third of createHash().update().digest() for short inputs.
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
