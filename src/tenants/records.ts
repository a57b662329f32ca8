import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import type { MessageBus } from '../store/bus.js';
import type { StateStore } from '../store/types.js';
import type { JsonObject } from '../call/types.js';

/**
 * Tenants kept in the state store (docs/configuration.md#tenants-as-data): one record per tenant, a sorted
 * index of their ids for listing (never a store scan), and a message on the bus after every change so each
 * replica drops what it compiled for that tenant.
 */
export interface TenantRecord {
  /** Counts every write of the id, across deletes: an ETag never comes back. */
  revision: number;
  /** The configuration as it was sent (defaults are filled when it is compiled, not stored). */
  config: JsonObject;
  updatedAt: string;
  /** Who wrote it: `<tenant>/<user>` of the caller. */
  updatedBy: string;
}

/** A record as read, with the exact stored text a conditional write compares against. */
export interface StoredTenant {
  id: string;
  record: TenantRecord;
  raw: string;
  etag: string;
}

/** What a deleted tenant leaves for a day: its revision, so a tenant created again never repeats an ETag. */
interface Tombstone {
  deleted: true;
  revision: number;
}

const TOMBSTONE_TTL_MS = 24 * 60 * 60 * 1000;
export const TENANT_CHANNEL = 'tenants';
const INDEX_KEY = 'tenants:index';
const recordKey = (id: string): string => `tenants:record:${id}`;

export const etagOf = (raw: string): string => `"${sha256Hex(raw).slice(0, 24)}"`;
/** A configuration's digest as the audit records it before/after: SHA-256 of its canonical JSON, first 128 bits (fits an audit line's reason). */
export const configDigest = (config: unknown): string => sha256Hex(canonicalJson(config)).slice(0, 32);

export interface TenantRecords {
  get(id: string): Promise<StoredTenant | undefined>;
  /** Writes a new tenant; undefined when the id is taken. */
  create(id: string, config: JsonObject, by: string): Promise<StoredTenant | undefined>;
  /** Replaces `current` only while it is still what the store holds; undefined when it changed meanwhile. */
  replace(current: StoredTenant, config: JsonObject, by: string): Promise<StoredTenant | undefined>;
  /** Deletes `current` only while it is still what the store holds; false when it changed meanwhile. */
  remove(current: StoredTenant): Promise<boolean>;
  /** One page of ids in byte order: after `after`, starting with `prefix`. */
  ids(page: { after?: string; prefix?: string; limit: number }): Promise<string[]>;
  /** Tells every replica (this one too) that a tenant changed. */
  announce(id: string): Promise<void>;
  /** Calls `handler` with the id of every tenant changed on any replica; returns the unsubscribe. */
  onChange(handler: (id: string) => void): () => void;
}

function parse(raw: string): TenantRecord | Tombstone {
  return JSON.parse(raw) as TenantRecord | Tombstone;
}

const isTombstone = (value: TenantRecord | Tombstone): value is Tombstone => 'deleted' in value;

export function createTenantRecords(store: StateStore, bus: MessageBus, now: () => Date = () => new Date()): TenantRecords {
  const stored = (id: string, record: TenantRecord): StoredTenant => {
    const raw = JSON.stringify(record);
    return { id, record, raw, etag: etagOf(raw) };
  };
  const write = (revision: number, config: JsonObject, by: string): TenantRecord => ({ revision, config, updatedAt: now().toISOString(), updatedBy: by });

  const get = async (id: string): Promise<StoredTenant | undefined> => {
    const raw = await store.get(recordKey(id));
    if (raw === null) return undefined;
    const value = parse(raw);
    return isTombstone(value) ? undefined : { id, record: value, raw, etag: etagOf(raw) };
  };

  return {
    get,
    async create(id, config, by) {
      // Indexed first: a write that dies in between leaves an id listed without a record (GET answers 404),
      // never a tenant nobody can list.
      await store.indexAdd(INDEX_KEY, id);
      const fresh = stored(id, write(1, config, by));
      if (await store.setIfAbsent(recordKey(id), fresh.raw)) return fresh;
      const raw = await store.get(recordKey(id));
      if (raw === null) return undefined;
      const value = parse(raw);
      if (!isTombstone(value)) return undefined;
      const reborn = stored(id, write(value.revision + 1, config, by));
      return (await store.compareAndSet(recordKey(id), raw, reborn.raw)) ? reborn : undefined;
    },
    async replace(current, config, by) {
      const next = stored(current.id, write(current.record.revision + 1, config, by));
      return (await store.compareAndSet(recordKey(current.id), current.raw, next.raw)) ? next : undefined;
    },
    async remove(current) {
      const tombstone: Tombstone = { deleted: true, revision: current.record.revision + 1 };
      if (!(await store.compareAndSet(recordKey(current.id), current.raw, JSON.stringify(tombstone), { ttlMs: TOMBSTONE_TTL_MS }))) return false;
      await store.indexRemove(INDEX_KEY, current.id);
      // Created again between the two steps: listed again.
      if ((await get(current.id)) !== undefined) await store.indexAdd(INDEX_KEY, current.id);
      return true;
    },
    ids(page) {
      return store.indexRange(INDEX_KEY, page);
    },
    async announce(id) {
      await bus.publish(TENANT_CHANNEL, JSON.stringify({ id }));
    },
    onChange(handler) {
      return bus.subscribe(TENANT_CHANNEL, (message) => {
        let id: unknown;
        try {
          id = (JSON.parse(message) as { id?: unknown }).id;
        } catch {
          return;
        }
        if (typeof id === 'string') handler(id);
      });
    },
  };
}
