// The file's tenants as a table of texts, not objects (docs/configuration.md#tenants): at 100,000 tenants the
// objects of every idle tenant arriving at once at start grew Node 24's young generation, whose pages stayed
// resident. Each tenant is kept as the JSON of what the file said (secrets resolved, validated, defaults not
// filled), with its id and the digest of its text in the file, all in one buffer outside the JS heap; a tenant
// becomes an object (defaults filled, frozen) when something reads it, and a bounded cache keeps the recent ones.
import { isDeepStrictEqual } from 'node:util';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig, TenantConfig } from './types.js';

/** The table as it travels (a worker transfers its buffers): what `CompactTenants` reads. */
export interface CompactTenantData {
  /**
   * Per tenant: its id, then its 32-byte digest when it has one, then its JSON text (UTF-8) unless a tenant
   * before it had the same text: tenants of one template share one copy.
   */
  readonly bytes: Uint8Array;
  /** Per tenant, five numbers: where its id starts and ends, where its text starts and ends, 1 when a digest follows the id. */
  readonly index: Int32Array;
  /** The tenants' positions in the order of their ids (JS string order), for lookups and sorted listings. */
  readonly order: Int32Array;
}

const FIELDS = 5;
const DIGEST_BYTES = 32;
// Texts remembered for sharing, by a hash of their bytes: bounded, so a file of all-different tenants costs the
// read at most this many entries (a later text whose hash is new is written out, as before).
const SHARED_TEXTS_MAX = 65_536;

/**
 * Writes tenants in file order straight into one buffer: nothing per tenant stays on the JS heap but its id
 * (a worker's heap pages stayed resident after it ended on Node 24, so the read keeps its heap small). A text
 * equal to an earlier tenant's is not written again: at 100,000 tenants of the shape the texts were
 * ~19 MiB of the table's ~27, resident for the process's life (bench/results.md, issue 46).
 */
export class CompactTenantsBuilder {
  private readonly ids: string[] = [];
  private readonly seen = new Set<string>();
  /** The start of the first text written with each hash (its end is in the index of the tenant that wrote it: `textEnds`). */
  private readonly texts = new Map<number, number>();
  private readonly textEnds = new Map<number, number>();
  private bytes: Buffer;
  private index: Int32Array;
  private at = 0;

  /** `bytesHint`, `countHint`: what the table is expected to take (it grows past them when needed). */
  constructor(bytesHint = 4096, countHint = 16) {
    this.bytes = Buffer.allocUnsafeSlow(Math.max(bytesHint, 64));
    this.index = new Int32Array(Math.max(countHint, 1) * FIELDS);
  }

  /** False (and nothing added) when `id` was added before. */
  add(id: string, text: string | Uint8Array, digest: string | undefined): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    const slot = this.ids.length * FIELDS;
    this.ids.push(id);
    const textBytes = typeof text === 'string' ? Buffer.byteLength(text) : text.byteLength;
    this.reserve(Buffer.byteLength(id) + textBytes + (digest === undefined ? 0 : DIGEST_BYTES), slot + FIELDS);
    const { bytes, index } = this;
    index[slot] = this.at;
    this.at += bytes.write(id, this.at, 'utf8');
    index[slot + 1] = this.at;
    index[slot + 4] = digest === undefined ? 0 : 1;
    if (digest !== undefined) this.at += bytes.write(digest, this.at, 'latin1');
    // Written first, then dropped again when an earlier tenant wrote the same bytes.
    const start = this.at;
    if (typeof text === 'string') this.at += bytes.write(text, this.at, 'utf8');
    else {
      bytes.set(text, this.at);
      this.at += textBytes;
    }
    const hash = hashBytes(bytes, start, this.at);
    const earlier = this.texts.get(hash);
    const earlierEnd = earlier === undefined ? undefined : this.textEnds.get(earlier);
    if (earlier !== undefined && earlierEnd !== undefined && bytes.compare(bytes, start, this.at, earlier, earlierEnd) === 0) {
      this.at = start;
      index[slot + 2] = earlier;
      index[slot + 3] = earlierEnd;
      return true;
    }
    if (earlier === undefined && this.texts.size < SHARED_TEXTS_MAX) {
      this.texts.set(hash, start);
      this.textEnds.set(start, this.at);
    }
    index[slot + 2] = start;
    index[slot + 3] = this.at;
    return true;
  }

  build(): CompactTenantData {
    const { ids } = this;
    const order = Int32Array.from(ids.keys()).sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
    // Buffers of their own (not slices of Node's pool), so a worker can transfer them; a copy only when much is unused.
    const used = this.bytes.subarray(0, this.at);
    const bytes = this.at >= this.bytes.length * 0.75 ? used : copyOwn(used);
    return { bytes, index: this.index.slice(0, ids.length * FIELDS), order };
  }

  private reserve(bytes: number, slots: number): void {
    if (this.at + bytes > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.at + bytes));
      this.bytes.copy(grown, 0, 0, this.at);
      this.bytes = grown;
    }
    if (slots > this.index.length) {
      const grown = new Int32Array(Math.max(this.index.length * 2, slots));
      grown.set(this.index);
      this.index = grown;
    }
  }
}

/** FNV-1a over `bytes[start, end)`: which earlier text to compare with, not a digest. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i += 1) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

function copyOwn(view: Uint8Array): Buffer {
  const own = Buffer.allocUnsafeSlow(view.byteLength);
  own.set(view);
  return own;
}

/** Turns a tenant's JSON (validated before) into the tenant with its defaults filled, frozen. */
export type CompleteTenant = (id: string, raw: unknown) => TenantConfig;

// The tenants read most recently, by their text: repeated reads of a tenant (its compile, its requests'
// lookups, a reload's comparisons) give the same object. Bounded: idle tenants stay text.
const recent = new LRUCache<string, TenantConfig>({ max: 2048 });

const byRecord = new WeakMap<object, CompactTenants>();

/** The file's tenants kept as text; `record` reads like the `tenants` object of a config. */
export class CompactTenants {
  readonly size: number;
  /** A read-only `Record<id, TenantConfig>` over the table: the `tenants` of a config read tenant by tenant. */
  readonly record: Readonly<Record<string, TenantConfig>>;
  private readonly bytes: Buffer;
  private sortedIdList: readonly string[] | undefined;

  constructor(
    readonly data: CompactTenantData,
    private readonly complete: CompleteTenant,
  ) {
    this.bytes = Buffer.from(data.bytes.buffer, data.bytes.byteOffset, data.bytes.byteLength);
    this.size = data.index.length / FIELDS;
    this.record = this.makeRecord();
    byRecord.set(this.record, this);
  }

  idAt(position: number): string {
    const { index } = this.data;
    return this.bytes.toString('utf8', index[position * FIELDS]!, index[position * FIELDS + 1]!);
  }

  /** The tenant's JSON as the file said it (defaults not filled). */
  textAt(position: number): string {
    const { index } = this.data;
    return this.bytes.toString('utf8', index[position * FIELDS + 2]!, index[position * FIELDS + 3]!);
  }

  /** The same text's bytes (a view, not a copy). */
  textBytesAt(position: number): Buffer {
    const { index } = this.data;
    return this.bytes.subarray(index[position * FIELDS + 2]!, index[position * FIELDS + 3]!);
  }

  /** The digest of the tenant's text in the file; undefined for one read again on every load (it refers to a secret). */
  digestAt(position: number): string | undefined {
    const { index } = this.data;
    if (index[position * FIELDS + 4] !== 1) return undefined;
    const end = index[position * FIELDS + 1]!;
    return this.bytes.toString('latin1', end, end + DIGEST_BYTES);
  }

  /** The position of `id`, or -1. */
  positionOf(id: string): number {
    const { order } = this.data;
    let low = 0;
    let high = order.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const position = order[middle]!;
      const found = this.idAt(position);
      if (found === id) return position;
      if (found < id) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  tenantAt(position: number): TenantConfig {
    const text = this.textAt(position);
    let tenant = recent.get(text);
    if (!tenant) recent.set(text, (tenant = this.complete(this.idAt(position), JSON.parse(text))));
    return tenant;
  }

  /**
   * The tenant made afresh and not remembered: for a pass over every tenant (the start's check), whose objects
   * should die young. Through `recent` each would live until 2,048 later ones pushed it out, long enough to be
   * promoted: at 100,000 tenants of different texts that grew the old generation by ~80 MiB (bench/results.md, ten28).
   */
  freshTenantAt(position: number): TenantConfig {
    return this.complete(this.idAt(position), JSON.parse(this.textAt(position)));
  }

  /**
   * Whether the tenant's text is an earlier tenant's, shared in the table (the builder writes an id before its
   * text, so a text that starts before the id was written by an earlier tenant). Equal texts past the sharing
   * bound are not shared and answer false.
   */
  sharesEarlierText(position: number): boolean {
    const { index } = this.data;
    return index[position * FIELDS + 2]! < index[position * FIELDS]!;
  }

  /** The ids in file order. */
  ids(): string[] {
    return Array.from({ length: this.size }, (_, position) => this.idAt(position));
  }

  /** The ids in JS string order, decoded once. */
  sortedIds(): readonly string[] {
    return (this.sortedIdList ??= Array.from(this.data.order, (position) => this.idAt(position)));
  }

  private makeRecord(): Readonly<Record<string, TenantConfig>> {
    // Every read of `tenants` goes through these traps; a lookup by id is a binary search of the table, and
    // listing the keys (Object.keys, Object.hasOwn) makes no tenant.
    const find = (key: string | symbol): number => (typeof key === 'string' ? this.positionOf(key) : -1);
    const handler: ProxyHandler<Record<string, TenantConfig>> = {
      get: (_, key) => {
        const position = find(key);
        return position === -1 ? undefined : this.tenantAt(position);
      },
      has: (_, key) => find(key) !== -1,
      ownKeys: () => this.ids(),
      getOwnPropertyDescriptor: (_, key) => {
        const position = find(key);
        return position === -1 ? undefined : { get: () => this.tenantAt(position), enumerable: true, configurable: true };
      },
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    };
    return new Proxy<Record<string, TenantConfig>>({}, handler);
  }
}

/** The table behind a config's `tenants`, when it was read tenant by tenant. */
export function compactOf(tenants: Readonly<Record<string, TenantConfig>>): CompactTenants | undefined {
  return byRecord.get(tenants);
}

/** The ids of `tenants` in their order, without making a tenant. */
export function tenantIds(tenants: Readonly<Record<string, TenantConfig>>): string[] {
  return compactOf(tenants)?.ids() ?? Object.keys(tenants);
}

/**
 * The ids of `tenants` in their order, read afresh on each iteration without an array of them all: at 100,000
 * file tenants an array of every id, made at start and kept, counted toward what grew Node 24's young
 * generation (bench/results.md, ten25).
 */
export function tenantIdView(tenants: Readonly<Record<string, TenantConfig>>): Iterable<string> {
  const compact = compactOf(tenants);
  if (!compact) return Object.keys(tenants);
  return {
    *[Symbol.iterator]() {
      for (let position = 0; position < compact.size; position += 1) yield compact.idAt(position);
    },
  };
}

/** Whether `id` has the same configuration in `a` and `b` (both without it counts as the same). */
export function sameTenant(a: Readonly<Record<string, TenantConfig>>, b: Readonly<Record<string, TenantConfig>>, id: string): boolean {
  if (a === b) return true;
  const [left, right] = [compactOf(a), compactOf(b)];
  if (!left || !right) return isDeepStrictEqual(Object.hasOwn(a, id) ? a[id] : undefined, Object.hasOwn(b, id) ? b[id] : undefined);
  const [from, to] = [left.positionOf(id), right.positionOf(id)];
  if (from === -1 || to === -1) return from === to;
  return left.textBytesAt(from).equals(right.textBytesAt(to));
}

/**
 * The ids of `next` whose configuration is not the one in `previous` (all of them without `previous`), in
 * `next`'s order. Two tables are walked side by side: an id at the same place is not looked up.
 */
export function changedTenantIds(previous: Readonly<Record<string, TenantConfig>> | undefined, next: Readonly<Record<string, TenantConfig>>): string[] {
  const [left, right] = [previous && compactOf(previous), compactOf(next)];
  if (!previous) return tenantIds(next);
  if (!left || !right) return Object.keys(next).filter((id) => !sameTenant(previous, next, id));
  const changed: string[] = [];
  for (let position = 0; position < right.size; position += 1) {
    const id = right.idAt(position);
    const before = position < left.size && left.idAt(position) === id ? position : left.positionOf(id);
    if (before === -1 || !left.textBytesAt(before).equals(right.textBytesAt(position))) changed.push(id);
  }
  return changed;
}

/** Whether two configs say the same: their tenants compared by text when both were read tenant by tenant. */
export function sameConfig(a: GatewayConfig, b: GatewayConfig): boolean {
  if (a === b) return true;
  const [left, right] = [compactOf(a.tenants), compactOf(b.tenants)];
  if (!left || !right) return isDeepStrictEqual(a, b);
  if (!isDeepStrictEqual({ ...a, tenants: undefined }, { ...b, tenants: undefined }) || left.size !== right.size) return false;
  for (let position = 0; position < left.size; position += 1) {
    if (left.idAt(position) !== right.idAt(position) || !left.textBytesAt(position).equals(right.textBytesAt(position))) return false;
  }
  return true;
}
