import type { StateStore } from '../store/types.js';

/** A named text of checkpoint lines (the verifier's TextSource). */
interface CheckpointText {
  name: string;
  text: string;
}

/** Checkpoints a tenant's (or the gateway-wide) list keeps by default: the newest ones, older ones dropped. */
export const DEFAULT_STORED_CHECKPOINTS = 10_000;

/**
 * One capped list per tenant and one for the gateway-wide chains, shared by every replica's chains of it:
 * keyed by the tenant, never by a replica's instance id, so restarts add no keys; the cap bounds each list.
 */
export function checkpointListKey(tenant: string | null): string {
  return tenant === null ? 'audit-checkpoints:gateway' : `audit-checkpoints:tenant:${encodeURIComponent(tenant)}`;
}

/** The tenant of a chain id (`<instance>/<tenant>`, or `<instance>` gateway-wide: instance ids hold no `/`). */
export function tenantOfChain(chain: string): string | null {
  const slash = chain.indexOf('/');
  return slash === -1 ? null : chain.slice(slash + 1);
}

/** Writes each checkpoint to its tenant's capped list in the state store; rejects when any was not taken. */
export function createStoreCheckpointWriter(store: StateStore, keep: number): (records: ReadonlyArray<{ chain: string }>) => Promise<void> {
  return async (records) => {
    // Each entry one JSON line, as a checkpoint file holds it.
    await Promise.all(records.map((record) => store.pushCapped(checkpointListKey(tenantOfChain(record.chain)), `${JSON.stringify(record)}\n`, keep)));
  };
}

/**
 * The kept checkpoints of these tenants (null: the gateway-wide list), each list as one source of JSON lines
 * in the order written, as the verifier reads a checkpoint file.
 */
export async function readStoredCheckpoints(store: StateStore, tenants: ReadonlyArray<string | null>, keep = DEFAULT_STORED_CHECKPOINTS, label = 'store'): Promise<CheckpointText[]> {
  const unique = [...new Set(tenants)];
  return Promise.all(
    unique.map(async (tenant) => {
      const key = checkpointListKey(tenant);
      const newestFirst = await store.recent(key, keep, 0);
      return { name: `${label}:${key}`, text: newestFirst.reverse().join('') };
    }),
  );
}

/** The newest `limit` kept checkpoints of one tenant as one source, in the order written. */
export async function recentStoredCheckpoints(store: StateStore, tenant: string | null, limit: number): Promise<CheckpointText> {
  const key = checkpointListKey(tenant);
  return { name: `store:${key}`, text: (await store.recent(key, limit, 0)).reverse().join('') };
}
