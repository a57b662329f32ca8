import { DomainError, type ErrorCode } from '../errors.js';
import { hash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { StateStore } from '../store/types.js';
import type { KeyIssuer, Principal } from '../call/principal.js';
import { hashTag } from '../store/hash-tag.js';

/** Runtime API keys start with this, so only they cost a store lookup; every other token skips it. */
const RUNTIME_KEY_PREFIX = 'tgk_';
const TOKEN_SHAPE = /^tgk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/;
const ID_SHAPE = /^k_[0-9a-f]{16}$/;
// A key's last use is written at most this often per key and replica: one store write per minute, not per request.
const LAST_USED_EVERY_MS = 60_000;
// Every runtime key in a chain costs one store read per request that presents the key at its end.
const MAX_ISSUERS = 4;

/** A runtime key as stored (never the key itself: only its SHA-256). */
export interface RuntimeKeyRecord {
  id: string;
  tenant: string;
  user: string;
  roles: string[];
  createdAt: string;
  createdBy: string;
  sha256: string;
  /**
   * The credentials that minted it, creator first: the key works only while each of them does. Absent on
   * records written before chains were kept (then only `createdBy` is known).
   */
  issuers?: KeyIssuer[];
  /** ISO time after which the key is refused (the store also drops it then); absent: until revoked. */
  expiresAt?: string;
}

export interface RuntimeKeyView {
  id: string;
  user: string;
  roles: string[];
  createdAt: string;
  createdBy: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export class RuntimeKeyError extends DomainError {
  constructor(
    readonly code: 'LIMIT' | 'NOT_FOUND' | 'FORBIDDEN',
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeKeyError';
  }

  get gatewayCode(): ErrorCode {
    return this.code === 'NOT_FOUND' ? 'TG_NOT_FOUND' : this.code === 'FORBIDDEN' ? 'TG_FORBIDDEN' : 'TG_CONFLICT';
  }
}

export interface RuntimeKeys {
  /** Mints a key for `user` in the creator's tenant; the key is in the answer only (never stored). */
  create(creator: Principal, input: { user: string; roles: string[]; expiresInSec?: number }): Promise<{ key: string; record: RuntimeKeyView }>;
  list(tenant: string): Promise<RuntimeKeyView[]>;
  /**
   * Deletes the key and the keys it minted: the next request with any of them is refused on every replica.
   * Returns the ids of the keys minted below it that went with it.
   */
  revoke(tenant: string, id: string): Promise<string[]>;
  /** The principal of a live runtime key, or undefined (not a runtime key, unknown, revoked, expired, or a creator gone). Looked up per request. */
  verify(token: string): Promise<Principal | undefined>;
}

const digestOf = (token: string): string => hash('sha256', token, 'hex');
// Tenants are encoded so one tenant's prefix is never a prefix of another's (tenant "a" vs "a:b"), and the
// encoded name (which holds no brace) is the Cluster hash tag of the tenant's index and count: the lease
// script that counts a key touches both, so they share a slot (docs/architecture.md#state-store).
const tenantTag = (tenant: string): string => hashTag(encodeURIComponent(tenant));
const indexPrefix = (tenant: string): string => `apikeys:${tenantTag(tenant)}:`;
// Index records written before the tenant was a hash tag: still listed and revocable, never counted.
const legacyIndexPrefix = (tenant: string): string => `apikeys:${encodeURIComponent(tenant)}:`;
const lookupKey = (sha256: string): string => `apikey:${sha256}`;
const usedKey = (tenant: string, id: string): string => `apikey-used:${encodeURIComponent(tenant)}:${id}`;
// The tenant's keys counted against `admin.maxKeysPerTenant`: a lease group (src/store/types.ts), so the
// check and the add are one atomic store step on every replica.
const capGroup = (tenant: string): string => `apikey-count:${tenantTag(tenant)}`;
// A lease needs a TTL; a key without `expiresInSec` lives until revoked, which this stands for.
const UNTIL_REVOKED_MS = 100 * 365 * 24 * 3600 * 1000;

export function isRuntimeKeyToken(token: string): boolean {
  return token.startsWith(RUNTIME_KEY_PREFIX);
}

/** Is this configured API key (`auth.apiKeys`, the live config) still there, unchanged and an admin of the tenant? */
export type ApiKeyLive = (tenant: string, issuer: { id: string; sha256: string; user: string }) => boolean;

/** The chain a key minted by `creator` hangs on: the creator's own credential, then the chain of its key. */
function issuersOf(creator: Principal): KeyIssuer[] {
  const credential = creator.credential;
  // Principals rebuilt from a stored record carry no credential: nothing to tie a new key's life to.
  if (!credential) throw new RuntimeKeyError('FORBIDDEN', 'this credential cannot mint keys');
  const own: KeyIssuer = credential.kind === 'jwt' ? { user: creator.user, kind: 'jwt' } : { user: creator.user, kind: credential.kind, id: credential.id, sha256: credential.sha256 };
  const chain = [own, ...(credential.kind === 'runtimeKey' ? credential.issuers : [])];
  if (chain.length > MAX_ISSUERS) throw new RuntimeKeyError('FORBIDDEN', `a key minted through ${MAX_ISSUERS - 1} runtime keys cannot mint another`);
  return chain;
}

// Records written before chains were kept name only the creator's user: a link nothing can check, but it
// still counts for separation of duties.
const chainOf = (record: RuntimeKeyRecord): KeyIssuer[] => record.issuers ?? [{ user: record.createdBy, kind: 'jwt' }];

const isExpired = (record: RuntimeKeyRecord, at: number): boolean => record.expiresAt !== undefined && Date.parse(record.expiresAt) <= at;

/**
 * Runtime API keys in the state store. The lookup record (`apikey:<sha256>`) is read on every request
 * that presents a runtime key — never cached — so a revocation holds on the next request on every
 * replica sharing the store. Keys never reach the token cache. A key also stops working once any
 * credential that minted it (directly or through other runtime keys) is revoked, expired, removed from
 * the config or no longer an admin: checked on the same request path, so it needs no cleanup to hold.
 */
export function createRuntimeKeys(options: { store: StateStore; maxPerTenant: () => number; apiKeyLive: ApiKeyLive; now?: () => number }): RuntimeKeys {
  const { store } = options;
  const now = options.now ?? Date.now;
  // Keys whose last use was written within LAST_USED_EVERY_MS: the next use of one writes nothing. Bounded, so
  // many keys in use cost memory no more than 10,000 entries (past them the least recently used may write again).
  const recentlyWritten = new LRUCache<string, true>({ max: 10_000, ttl: LAST_USED_EVERY_MS - 1, ttlResolution: 0, perf: { now } });
  const overLimit = (): RuntimeKeyError => new RuntimeKeyError('LIMIT', `at most ${options.maxPerTenant()} runtime API keys per tenant`);

  const view = async (record: RuntimeKeyRecord): Promise<RuntimeKeyView> => ({
    id: record.id,
    user: record.user,
    roles: record.roles,
    createdAt: record.createdAt,
    createdBy: record.createdBy,
    expiresAt: record.expiresAt ?? null,
    lastUsedAt: await store.get(usedKey(record.tenant, record.id)),
  });

  /** Drops the index record and uncounts the key in one step (a record another write replaced is left alone). */
  const uncount = (tenant: string, id: string, sha256: string): Promise<boolean> =>
    store.releaseLease({ id, record: { key: `${indexPrefix(tenant)}${id}`, value: sha256 }, groups: [capGroup(tenant)] });

  const records = async (tenant: string): Promise<RuntimeKeyRecord[]> => {
    const found: RuntimeKeyRecord[] = [];
    for (const prefix of [indexPrefix(tenant), legacyIndexPrefix(tenant)]) {
      for (const { key, value } of await store.scan(prefix)) {
        const raw = await store.get(lookupKey(value));
        if (raw !== null) found.push(JSON.parse(raw) as RuntimeKeyRecord);
        // A key whose lookup record is gone (revoked by a replica that stopped half way, or just expired) no
        // longer counts against the cap.
        else if (prefix === legacyIndexPrefix(tenant)) await store.delete(key);
        else await uncount(tenant, key.slice(prefix.length), value);
      }
    }
    return found;
  };

  /** Every credential on the key's chain still live: config keys in the live config, runtime keys in the store. */
  const issuersLive = async (record: RuntimeKeyRecord, at: number): Promise<boolean> => {
    const checks = chainOf(record).map(async (issuer) => {
      if (issuer.kind === 'jwt') return true; // an identity provider's account: toolgate cannot see it end (docs/security-model.md#runtime-keys)
      if (issuer.kind === 'apiKey') return options.apiKeyLive(record.tenant, issuer);
      const raw = await store.get(lookupKey(issuer.sha256));
      return raw !== null && !isExpired(JSON.parse(raw) as RuntimeKeyRecord, at);
    });
    return (await Promise.all(checks)).every(Boolean);
  };

  const remove = async (tenant: string, id: string, sha256: string): Promise<void> => {
    // The lookup record first: it is what every request reads, so the key stops working here.
    await store.delete(lookupKey(sha256));
    await uncount(tenant, id, sha256);
    await store.delete(`${legacyIndexPrefix(tenant)}${id}`);
    await store.delete(usedKey(tenant, id));
    recentlyWritten.delete(id);
  };

  const touch = (record: RuntimeKeyRecord): void => {
    if (recentlyWritten.has(record.id)) return;
    const at = now();
    recentlyWritten.set(record.id, true);
    const ttl = record.expiresAt === undefined ? undefined : { ttlMs: Math.max(1, Date.parse(record.expiresAt) - at) };
    store.set(usedKey(record.tenant, record.id), new Date(at).toISOString(), ttl).catch(() => recentlyWritten.delete(record.id));
  };

  return {
    async create(creator, input) {
      const issuers = issuersOf(creator);
      const idHex = randomBytes(8).toString('hex');
      const key = `${RUNTIME_KEY_PREFIX}${idHex}_${randomBytes(32).toString('base64url')}`;
      const createdAt = now();
      const ttlMs = input.expiresInSec === undefined ? undefined : input.expiresInSec * 1000;
      const record: RuntimeKeyRecord = {
        id: `k_${idHex}`,
        tenant: creator.tenant,
        user: input.user,
        roles: [...new Set(input.roles)],
        createdAt: new Date(createdAt).toISOString(),
        createdBy: creator.user,
        sha256: digestOf(key),
        issuers,
        ...(ttlMs === undefined ? {} : { expiresAt: new Date(createdAt + ttlMs).toISOString() }),
      };
      // Nobody holds the key before this call returns, so the lookup record may come first: a crash after it
      // leaves an unusable record, never a counted place that nothing lists (which would shrink the cap).
      if (!(await store.setIfAbsent(lookupKey(record.sha256), JSON.stringify(record), ttlMs === undefined ? undefined : { ttlMs }))) {
        throw new Error('runtime key collision');
      }
      // Counted and indexed in one atomic step: concurrent creates on any replica fill the cap exactly, and a
      // revocation (cascades included) uncounts in one step too. An expiring key's lease ends with it.
      const group = capGroup(record.tenant);
      const grant = await store.acquireLease({
        id: record.id,
        record: { key: `${indexPrefix(record.tenant)}${record.id}`, value: record.sha256 },
        ttlMs: ttlMs ?? UNTIL_REVOKED_MS,
        // One group is both: `own` never evicts (no limit of its own), `shared` refuses at the cap.
        own: { key: group, limit: Number.MAX_SAFE_INTEGER, recordPrefix: indexPrefix(record.tenant) },
        shared: { key: group, limit: options.maxPerTenant() },
      });
      if (!grant.granted) {
        await store.delete(lookupKey(record.sha256));
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
      const sha256 = (await store.get(`${indexPrefix(tenant)}${id}`)) ?? (await store.get(`${legacyIndexPrefix(tenant)}${id}`));
      if (sha256 === null) throw new RuntimeKeyError('NOT_FOUND', 'no such API key');
      await remove(tenant, id, sha256);
      // The keys it minted already fail verification (their chain names this key); deleting them too frees
      // the tenant's cap and keeps the listing true. A key minted concurrently is caught by verification alone.
      const below: string[] = [];
      for (const record of await records(tenant)) {
        if (!record.issuers?.some((issuer) => issuer.kind === 'runtimeKey' && issuer.id === id)) continue;
        await remove(tenant, record.id, record.sha256);
        below.push(record.id);
      }
      return below;
    },

    async verify(token) {
      if (!TOKEN_SHAPE.test(token)) return undefined;
      const raw = await store.get(lookupKey(digestOf(token)));
      if (raw === null) return undefined;
      const record = JSON.parse(raw) as RuntimeKeyRecord;
      const at = now();
      if (isExpired(record, at) || !(await issuersLive(record, at))) return undefined;
      touch(record);
      // Never an operator: operators are named in config (auth.operators), not minted by a tenant admin.
      return Object.freeze({
        tenant: record.tenant,
        user: record.user,
        roles: Object.freeze([...record.roles]),
        claims: Object.freeze({ sub: record.user, tenant: record.tenant, apiKeyId: record.id }),
        credential: Object.freeze({ kind: 'runtimeKey', id: record.id, sha256: record.sha256, issuers: Object.freeze(chainOf(record)) }),
      });
    },
  };
}
