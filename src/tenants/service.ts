import { auditSecurityEvent } from '../audit/events.js';
import type { AuditSink } from '../audit/types.js';
import { validateTenantObject } from '../config/load.js';
import { compactOf } from '../config/compact-tenants.js';
import type { GatewayConfig, TenantConfig } from '../config/types.js';
import { canonicalJson } from '../shared/canonical-json.js';
import type { JsonObject, Logger } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { noSuchTenant, TenantApiError } from './errors.js';
import { applyMergePatch } from './merge-patch.js';
import { wideningKeys } from './narrowing.js';
import { configDigest, etagOf, type StoredTenant, type TenantRecords } from './records.js';

/** One tenant as the API shows it. */
export interface TenantDocument {
  id: string;
  /** `file`: from the configuration file (read-only here); `store`: created through this API. */
  source: 'file' | 'store';
  config: JsonObject;
  revision: number | null;
  updatedAt: string | null;
  updatedBy: string | null;
}

export interface TenantAnswer {
  tenant: TenantDocument;
  etag: string;
}

/** Who asks, and the request their change is audited under. */
export interface TenantCaller {
  principal: Principal;
  request: { id: string; ip: string };
}

export interface Preconditions {
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
}

export interface TenantListQuery {
  cursor?: string | undefined;
  limit: number;
  q?: string | undefined;
  match: 'prefix' | 'substring';
}

export interface TenantServiceDeps {
  records: TenantRecords;
  /** The live configuration: its file tenants, its MCP services, `tenancy`. */
  config: () => GatewayConfig;
  /** Compiles a tenant as its first request would (policy options checked), without keeping it. */
  check: (id: string, tenant: TenantConfig) => Promise<void>;
  /** Drops what this replica compiled for the tenant at once (the bus tells every replica, this one too). */
  invalidate: (id: string) => void;
  audit: AuditSink;
  log: Logger;
}

/** Store ids looked at by one substring search at most; the answer's cursor goes on from there. */
const SUBSTRING_EXAMINED = 5000;
const SUBSTRING_BATCH = 500;

/**
 * The tenant API (docs/api.md#tenants): one tenant's configuration read, created, replaced, patched and deleted
 * with ETags, and the list of tenants. A global operator may do all of it to any tenant of the store; a tenant's
 * own `admin` may read its tenant, and narrow it when the operator allows (`tenancy.tenantAdmins: narrow`).
 * Another tenant's id answers as an unknown one, before anything is read. File tenants are read-only here.
 */
export function createTenantService(deps: TenantServiceDeps) {
  const fileTenant = (id: string): TenantConfig | undefined => {
    const tenants = deps.config().tenants;
    return Object.hasOwn(tenants, id) ? tenants[id] : undefined;
  };
  const visible = (caller: TenantCaller, id: string): void => {
    if (caller.principal.operator !== true && caller.principal.tenant !== id) throw noSuchTenant();
  };
  const writable = (caller: TenantCaller, id: string): void => {
    visible(caller, id);
    if (fileTenant(id)) throw new TenantApiError('CONFLICT', `tenant ${id} is defined in the configuration file; change it there`);
    if (caller.principal.operator !== true && deps.config().tenancy.tenantAdmins !== 'narrow') {
      throw new TenantApiError('FORBIDDEN', 'a tenant admin may read its tenant; changing it needs a global operator (tenancy.tenantAdmins)');
    }
  };
  const validate = (id: string, raw: unknown): TenantConfig => validateTenantObject(id, raw, deps.config());
  const by = (caller: TenantCaller): string => `${caller.principal.tenant}/${caller.principal.user}`;

  const documentOf = (stored: StoredTenant): TenantAnswer => ({
    tenant: { id: stored.id, source: 'store', config: stored.record.config, revision: stored.record.revision, updatedAt: stored.record.updatedAt, updatedBy: stored.record.updatedBy },
    etag: stored.etag,
  });

  /** A tenant admin's change must not widen what the operator set. */
  const narrowOnly = (caller: TenantCaller, current: StoredTenant, next: TenantConfig): void => {
    if (caller.principal.operator === true) return;
    const widened = wideningKeys(validate(current.id, current.record.config), next);
    if (widened.length > 0) {
      throw new TenantApiError('FORBIDDEN', `a tenant admin may only narrow its tenant; refused: ${widened.map((key) => `/tenants/${current.id}/${key}`).join(', ')}`);
    }
  };

  const changed = async (caller: TenantCaller, kind: 'tenant_created' | 'tenant_changed' | 'tenant_deleted', id: string, reason: string): Promise<void> => {
    deps.invalidate(id);
    // Filed under the tenant changed (its admins read it in their copy), never under the operator's own tenant,
    // whose admins must not learn other tenants' ids; the caller's tenant goes to the operator-only detail.
    auditSecurityEvent(deps.audit, caller.request, { kind, outcome: 'ok', reason, tenant: id, user: caller.principal.user, target: id, detail: `by ${by(caller)}` });
    await deps.records.announce(id).catch((error: unknown) => deps.log.warn({ err: error, tenant: id }, 'tenant change not announced to the other replicas; they revalidate within tenancy.revalidateMs'));
  };
  const digestLine = (before: StoredTenant | undefined, after: StoredTenant | undefined): string =>
    `before ${before ? configDigest(before.record.config) : 'none'}, after ${after ? configDigest(after.record.config) : 'none'}`;

  /** Replaces `current` with `config` (already merged, for a patch), checked as a whole. */
  const replace = async (caller: TenantCaller, current: StoredTenant, config: JsonObject, how: string): Promise<TenantAnswer> => {
    const tenant = validate(current.id, config);
    narrowOnly(caller, current, tenant);
    await deps.check(current.id, tenant);
    const next = await deps.records.replace(current, config, by(caller));
    if (!next) throw new TenantApiError('PRECONDITION_FAILED', `tenant ${current.id} was changed meanwhile; read it again`);
    await changed(caller, 'tenant_changed', current.id, `${how} revision ${next.record.revision}: ${digestLine(current, next)}`);
    return documentOf(next);
  };

  const current = async (id: string, preconditions: Preconditions): Promise<StoredTenant> => {
    const stored = await deps.records.get(id);
    if (!stored) throw noSuchTenant();
    if (preconditions.ifMatch !== undefined && !etagMatches(preconditions.ifMatch, stored.etag)) {
      throw new TenantApiError('PRECONDITION_FAILED', `If-Match does not match tenant ${id}'s ETag; read it again`);
    }
    return stored;
  };

  return {
    async get(caller: TenantCaller, id: string): Promise<TenantAnswer> {
      visible(caller, id);
      const fromFile = fileTenant(id);
      if (fromFile) {
        const config = fromFile as unknown as JsonObject;
        return { tenant: { id, source: 'file', config, revision: null, updatedAt: null, updatedBy: null }, etag: etagOf(canonicalJson(config)) };
      }
      const stored = await deps.records.get(id);
      if (!stored) throw noSuchTenant();
      return documentOf(stored);
    },

    /** Creates (201) or replaces (200) one tenant; `If-None-Match: *` makes it create-only, `If-Match` replace-only. */
    async put(caller: TenantCaller, id: string, config: JsonObject, preconditions: Preconditions): Promise<TenantAnswer & { created: boolean }> {
      writable(caller, id);
      const tenant = validate(id, config);
      const stored = await deps.records.get(id);
      if (stored) {
        if (preconditions.ifNoneMatch !== undefined && etagMatches(preconditions.ifNoneMatch, stored.etag)) {
          throw new TenantApiError('PRECONDITION_FAILED', `tenant ${id} exists already`);
        }
        if (preconditions.ifMatch !== undefined && !etagMatches(preconditions.ifMatch, stored.etag)) {
          throw new TenantApiError('PRECONDITION_FAILED', `If-Match does not match tenant ${id}'s ETag; read it again`);
        }
        return { ...(await replace(caller, stored, config, 'replaced at')), created: false };
      }
      if (preconditions.ifMatch !== undefined) throw new TenantApiError('PRECONDITION_FAILED', `tenant ${id} does not exist`);
      // A tenant admin's own tenant exists (its token got it here); gone meanwhile, it is unknown.
      if (caller.principal.operator !== true) throw noSuchTenant();
      await deps.check(id, tenant);
      const created = await deps.records.create(id, config, by(caller));
      if (!created) throw new TenantApiError('PRECONDITION_FAILED', `tenant ${id} was created meanwhile; read it`);
      await changed(caller, 'tenant_created', id, `created at revision ${created.record.revision}: ${digestLine(undefined, created)}`);
      return { ...documentOf(created), created: true };
    },

    /** JSON Merge Patch (RFC 7396) of a tenant of the store. */
    async patch(caller: TenantCaller, id: string, patch: JsonObject, preconditions: Preconditions): Promise<TenantAnswer> {
      writable(caller, id);
      const stored = await current(id, preconditions);
      const merged = applyMergePatch(stored.record.config, patch);
      return replace(caller, stored, merged as JsonObject, 'patched to');
    },

    async delete(caller: TenantCaller, id: string, preconditions: Preconditions): Promise<void> {
      writable(caller, id);
      if (caller.principal.operator !== true) throw new TenantApiError('FORBIDDEN', 'deleting a tenant needs a global operator');
      const stored = await current(id, preconditions);
      if (!(await deps.records.remove(stored))) throw new TenantApiError('PRECONDITION_FAILED', `tenant ${id} was changed meanwhile; read it again`);
      await changed(caller, 'tenant_deleted', id, `deleted at revision ${stored.record.revision}: ${digestLine(stored, undefined)}`);
    },

    /**
     * One page of tenant ids, file and store alike, in byte order after `cursor`; `q` narrows to ids starting
     * with it (`prefix`) or holding it (`substring`: at most SUBSTRING_EXAMINED store ids are looked at per
     * page, so a page may hold fewer than `limit` ids and still have a `next`).
     */
    async list(query: TenantListQuery): Promise<{ tenants: string[]; next?: string }> {
      const q = query.q ?? '';
      const after = query.cursor;
      const fits = (id: string): boolean => (query.match === 'substring' ? id.includes(q) : id.startsWith(q));
      const store = query.match === 'substring' && q !== '' ? await substringPage(deps.records, q, after, query.limit) : await prefixPage(deps.records, q, after, query.limit);
      const files = sortedFileIds(deps.config()).filter((id) => (after === undefined || id > after) && fits(id));
      const upper = store.done ? undefined : store.bound;
      const candidates = [...new Set([...store.ids, ...files.filter((id) => upper === undefined || id <= upper)])].sort(byteOrder);
      const tenants = candidates.slice(0, query.limit);
      const more = candidates.length > query.limit || !store.done || files.some((id) => upper !== undefined && id > upper);
      if (!more) return { tenants };
      const next = tenants.length === query.limit ? tenants.at(-1) : upper;
      return next === undefined ? { tenants } : { tenants, next };
    },
  };
}

export type TenantService = ReturnType<typeof createTenantService>;

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The file's tenant ids, sorted once per configuration version. */
const fileIds = new WeakMap<GatewayConfig, string[]>();
function sortedFileIds(config: GatewayConfig): string[] {
  let ids = fileIds.get(config);
  if (!ids) fileIds.set(config, (ids = compactOf(config.tenants)?.sortedIds().slice() ?? Object.keys(config.tenants).sort(byteOrder)));
  return ids;
}

interface StorePage {
  ids: string[];
  /** The last store id looked at. */
  bound: string | undefined;
  /** Nothing in the store after `bound`. */
  done: boolean;
}

async function prefixPage(records: TenantRecords, prefix: string, after: string | undefined, limit: number): Promise<StorePage> {
  const ids = await records.ids({ ...(after === undefined ? {} : { after }), prefix, limit });
  return { ids, bound: ids.at(-1), done: ids.length < limit };
}

async function substringPage(records: TenantRecords, q: string, after: string | undefined, limit: number): Promise<StorePage> {
  const ids: string[] = [];
  let position = after;
  let examined = 0;
  for (;;) {
    const batch = await records.ids({ ...(position === undefined ? {} : { after: position }), limit: SUBSTRING_BATCH });
    examined += batch.length;
    for (const id of batch) if (id.includes(q)) ids.push(id);
    position = batch.at(-1) ?? position;
    if (batch.length < SUBSTRING_BATCH) return { ids, bound: position, done: true };
    if (ids.length >= limit || examined >= SUBSTRING_EXAMINED) return { ids, bound: position, done: false };
  }
}

/** `If-Match` / `If-None-Match`: `*`, or a list of strong ETags (a weak one never matches a write). */
export function etagMatches(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((item) => item.trim())
    .some((item) => item === '*' || item === etag);
}
