import { validateTenantObject } from '../config/load.js';
import type { StoredTenantSource } from '../snapshot/snapshot.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Logger } from '../call/types.js';
import type { TenantRecords } from './records.js';

/** Store reads at once while checking the file's tenants against the store (start-up, reload). */
const CHECK_BATCH = 256;

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
        // In batches taken from `ids` as they come: at start it is every file tenant, read from its table.
        for (const batch of batches(ids, CHECK_BATCH)) {
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
