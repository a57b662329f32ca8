// Validated tenants are mostly the schema's defaults and a few templates: at 100,000 tenants their equal
// sub-objects, one copy each, were most of an idle tenant's memory (docs/configuration.md#tenants). Equal
// values become one frozen object; key order is part of equality, so nothing that reads an order changes.

/** Where shared values are kept by their text: a Map for one load, or a bounded cache kept across them. */
export interface ValueTable {
  get(key: string): unknown;
  /** Every shared value is a string or a frozen object or array (`{}`: what an LRUCache of `NonNullable<unknown>` takes). */
  set(key: string, value: NonNullable<unknown>): unknown;
}
type Table = ValueTable;

function share(value: unknown, table: Table | undefined): { value: unknown; key: string } {
  if (value === null || typeof value !== 'object') {
    const key = JSON.stringify(value) ?? 'null';
    if (typeof value !== 'string') return { value, key };
    // A string read from a file may be a slice of the file's whole text, keeping all of it alive: a copy of its own.
    let shared = table?.get(key);
    if (shared === undefined) table?.set(key, (shared = JSON.parse(key) as string));
    return { value: shared, key };
  }
  let key: string;
  let built: () => object;
  if (Array.isArray(value)) {
    const items = value.map((item) => share(item, table));
    key = `[${items.map((item) => item.key).join(',')}]`;
    built = () => Object.freeze(items.map((item) => item.value));
  } else {
    const entries = Object.entries(value).map(([name, item]) => [name, share(item, table)] as const);
    key = `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${item.key}`).join(',')}}`;
    built = () => {
      const copy: Record<string, unknown> = {};
      for (const [name, item] of entries) Object.defineProperty(copy, name, { value: item.value, enumerable: true, writable: true, configurable: true });
      return Object.freeze(copy);
    };
  }
  if (!table) return { value: built(), key };
  let shared = table.get(key);
  if (shared === undefined) table.set(key, (shared = built()));
  return { value: shared, key };
}

/**
 * A frozen copy of a JSON value (plain objects, arrays and scalars, as a parsed and validated config holds)
 * whose sub-values are shared with those of every value given to the same instance before. The value itself
 * is a copy of its own (a tenant's own object; its text would be kept for nothing). Keep an instance for one
 * load: its table holds the text of every distinct sub-value seen (or give it a bounded `table`).
 */
export function createValueSharing(table: Table = new Map<string, unknown>()): <T>(value: T) => T {
  return <T>(value: T): T => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return share(value, table).value as T;
    const copy: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) Object.defineProperty(copy, name, { value: share(item, table).value, enumerable: true, writable: true, configurable: true });
    return Object.freeze(copy) as T;
  };
}

/** Freezes a JSON value and everything in it, as this module gives them: what a structured clone gives back unfrozen. */
export function freezeAll<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) freezeAll(item);
  }
  return value;
}
