import { validateTenantObject } from '../config/load.js';
import type { StoredTenantSource } from '../snapshot/snapshot.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Logger } from '../call/types.js';
import type { TenantRecords } from './records.js';

/** Store reads at once while checking the file's tenants against the store (start-up, reload). */
const CHECK_BATCH = 256;
/** Ids per page when the store's index of tenants is read for that check. */
const INDEX_PAGE = 1000;
/** Up to this many tenants in the store, the check reads the store's index; past it, it reads the file's ids one by one. */
const INDEX_READ_MAX = 10_000;

/**
 * The store's tenants as a snapshot reads them: validated against the live config when compiled (a tenant
 * that no longer validates — say it names an MCP service a reload removed — is logged and answers as unknown).
 */
export function storedTenantSource(records: TenantRecords, log: Logger): StoredTenantSource {
  return {
    async load(id, config) {
      const stored = await records.get(id);
      if (!stored) return undefined;
      try {
        return { tenant: validateTenantObject(id, stored.record.config, config), revision: stored.record.revision };
      } catch (error) {
        log.error({ err: error, tenant: id, revision: stored.record.revision }, 'tenant in the state store no longer validates; refused until it is fixed');
        return undefined;
      }
    },
    async revision(id) {
      return (await records.get(id))?.record.revision;
    },
    async existing(ids) {
      const found: string[] = [];
      try {
        // Every stored tenant is in the index (it is indexed before its record is written): when the store holds
        // few, only the file's ids the index lists are read. At start `ids` is every file tenant (100,000 reads
        // of the store, one per id, allocated ~470 MB and took seconds; bench/results.md, ten25).
        const indexed = await indexedIds(records);
        const candidates = indexed ? filtered(ids, (id) => indexed.has(id)) : ids;
        // In batches taken from `candidates` as they come.
        for (const batch of batches(candidates, CHECK_BATCH)) {
          const held = await Promise.all(batch.map((id) => records.get(id)));
          batch.forEach((id, index) => held[index] && found.push(id));
        }
      } catch (error) {
        // A store that is down is an outage to ride out: the file's tenants serve (they win over the store's).
        if (!isStoreUnavailable(error)) throw error;
        log.warn({ err: error }, 'tenants of the file not checked against the state store: it is unavailable');
      }
      return found;
    },
  };
}

function* batches(items: Iterable<string>, size: number): Generator<string[]> {
  let batch: string[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** The ids the store's index lists, or undefined when it lists more than INDEX_READ_MAX. */
async function indexedIds(records: TenantRecords): Promise<Set<string> | undefined> {
  const indexed = new Set<string>();
  let after: string | undefined;
  for (;;) {
    const page = await records.ids(after === undefined ? { limit: INDEX_PAGE } : { after, limit: INDEX_PAGE });
    for (const id of page) indexed.add(id);
    if (indexed.size > INDEX_READ_MAX) return undefined;
    if (page.length < INDEX_PAGE) return indexed;
    after = page.at(-1);
  }
}

function* filtered(items: Iterable<string>, keep: (item: string) => boolean): Generator<string> {
  for (const item of items) if (keep(item)) yield item;
}
