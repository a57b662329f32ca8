import { hash, randomBytes } from 'node:crypto';
import type { StateStore } from '../store/types.js';
import type { Principal } from '../types.js';

/** Runtime API keys start with this, so only they cost a store lookup; every other token skips it. */
const RUNTIME_KEY_PREFIX = 'tgk_';
const TOKEN_SHAPE = /^tgk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/;
const ID_SHAPE = /^k_[0-9a-f]{16}$/;
// A key's last use is written at most this often per key and replica: one store write per minute, not per request.
const LAST_USED_EVERY_MS = 60_000;

/** A runtime key as stored (never the key itself: only its SHA-256). */
export interface RuntimeKeyRecord {
  id: string;
  tenant: string;
  user: string;
  roles: string[];
  createdAt: string;
  createdBy: string;
  sha256: string;
}

export interface RuntimeKeyView {
  id: string;
  user: string;
  roles: string[];
  createdAt: string;
  createdBy: string;
  lastUsedAt: string | null;
}

export class RuntimeKeyError extends Error {
  constructor(
    readonly code: 'LIMIT' | 'NOT_FOUND',
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeKeyError';
  }
}

export interface RuntimeKeys {
  /** Mints a key for `user` in the creator's tenant; the key is in the answer only (never stored). */
  create(creator: Principal, input: { user: string; roles: string[] }): Promise<{ key: string; record: RuntimeKeyView }>;
  list(tenant: string): Promise<RuntimeKeyView[]>;
  /** Deletes the key: the next request with it is refused on every replica. */
  revoke(tenant: string, id: string): Promise<void>;
  /** The principal of a live runtime key, or undefined (not a runtime key, unknown, revoked). Looked up per request. */
  verify(token: string): Promise<Principal | undefined>;
}

const digestOf = (token: string): string => hash('sha256', token, 'hex');
// Tenants are encoded so one tenant's prefix is never a prefix of another's (tenant "a" vs "a:b").
const indexPrefix = (tenant: string): string => `apikeys:${encodeURIComponent(tenant)}:`;
const lookupKey = (sha256: string): string => `apikey:${sha256}`;
const usedKey = (tenant: string, id: string): string => `apikey-used:${encodeURIComponent(tenant)}:${id}`;

export function isRuntimeKeyToken(token: string): boolean {
  return token.startsWith(RUNTIME_KEY_PREFIX);
}

/**
 * Runtime API keys in the state store. The lookup record (`apikey:<sha256>`) is read on every request
 * that presents a runtime key — never cached — so a revocation holds on the next request on every
 * replica sharing the store. Keys never reach the token cache.
 */
export function createRuntimeKeys(options: { store: StateStore; maxPerTenant: () => number; now?: () => number }): RuntimeKeys {
  const { store } = options;
  const now = options.now ?? Date.now;
  const lastWritten = new Map<string, number>();
  const overLimit = (): RuntimeKeyError => new RuntimeKeyError('LIMIT', `at most ${options.maxPerTenant()} runtime API keys per tenant`);

  const view = async (record: RuntimeKeyRecord): Promise<RuntimeKeyView> => ({
    id: record.id,
    user: record.user,
    roles: record.roles,
    createdAt: record.createdAt,
    createdBy: record.createdBy,
    lastUsedAt: await store.get(usedKey(record.tenant, record.id)),
  });

  const records = async (tenant: string): Promise<RuntimeKeyRecord[]> => {
    const index = await store.scan(indexPrefix(tenant));
    const found: RuntimeKeyRecord[] = [];
    for (const { value } of index) {
      const raw = await store.get(lookupKey(value));
      if (raw !== null) found.push(JSON.parse(raw) as RuntimeKeyRecord);
    }
    return found;
  };

  const touch = (record: RuntimeKeyRecord): void => {
    const at = now();
    const previous = lastWritten.get(record.id);
    if (previous !== undefined && at - previous < LAST_USED_EVERY_MS) return;
    if (lastWritten.size >= 10_000) lastWritten.clear();
    lastWritten.set(record.id, at);
    store.set(usedKey(record.tenant, record.id), new Date(at).toISOString()).catch(() => lastWritten.delete(record.id));
  };

  return {
    async create(creator, input) {
      if ((await store.scan(indexPrefix(creator.tenant))).length >= options.maxPerTenant()) {
        throw overLimit();
      }
      const idHex = randomBytes(8).toString('hex');
      const key = `${RUNTIME_KEY_PREFIX}${idHex}_${randomBytes(32).toString('base64url')}`;
      const record: RuntimeKeyRecord = {
        id: `k_${idHex}`,
        tenant: creator.tenant,
        user: input.user,
        roles: [...new Set(input.roles)],
        createdAt: new Date(now()).toISOString(),
        createdBy: creator.user,
        sha256: digestOf(key),
      };
      if (!(await store.setIfAbsent(lookupKey(record.sha256), JSON.stringify(record)))) throw new Error('runtime key collision');
      const indexKey = `${indexPrefix(record.tenant)}${record.id}`;
      await store.set(indexKey, record.sha256);
      // Counted again after the write: concurrent creates (on any replica) all pass the first check. A key that
      // finds the tenant over the cap withdraws itself, so the last writer of any over-cap set always sees it.
      if ((await store.scan(indexPrefix(record.tenant))).length > options.maxPerTenant()) {
        await store.delete(lookupKey(record.sha256));
        await store.delete(indexKey);
        throw overLimit();
      }
      return { key, record: { ...(await view(record)), lastUsedAt: null } };
    },

    async list(tenant) {
      const found = await records(tenant);
      const views = await Promise.all(found.map(view));
      return views.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
    },

    async revoke(tenant, id) {
      if (!ID_SHAPE.test(id)) throw new RuntimeKeyError('NOT_FOUND', 'no such API key');
      const indexKey = `${indexPrefix(tenant)}${id}`;
      const sha256 = await store.get(indexKey);
      if (sha256 === null) throw new RuntimeKeyError('NOT_FOUND', 'no such API key');
      // The lookup record first: it is what every request reads, so the key stops working here.
      await store.delete(lookupKey(sha256));
      await store.delete(indexKey);
      await store.delete(usedKey(tenant, id));
      lastWritten.delete(id);
    },

    async verify(token) {
      if (!TOKEN_SHAPE.test(token)) return undefined;
      const raw = await store.get(lookupKey(digestOf(token)));
      if (raw === null) return undefined;
      const record = JSON.parse(raw) as RuntimeKeyRecord;
      touch(record);
      // Never an operator: operators are named in config (auth.operators), not minted by a tenant admin.
      return Object.freeze({
        tenant: record.tenant,
        user: record.user,
        roles: Object.freeze([...record.roles]),
        claims: Object.freeze({ sub: record.user, tenant: record.tenant, apiKeyId: record.id }),
      });
    },
  };
}
