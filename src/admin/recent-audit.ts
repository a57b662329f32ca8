import type { AuditEvent, AuditSink } from '../audit/types.js';
import type { StateStore } from '../store/types.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Logger } from '../call/types.js';

export interface AuditQuery {
  user?: string;
  tool?: string;
  outcome?: string;
  /** Epoch ms: events at or after it. */
  since?: number;
  /** Epoch ms: events at or before it (paging back from the oldest event shown). */
  until?: number;
  limit: number;
}

export interface RecentAudit {
  /** Wraps the configured sink: every event goes to it (the system of record) and to the bounded copy. */
  tee(sink: AuditSink, also?: (event: AuditEvent) => void): AuditSink;
  /** Newest first, the caller's tenant only (the key is built from the tenant, never from a query). */
  query(tenant: string, query: AuditQuery): Promise<AuditEvent[]>;
  /** Every kept event of the tenant as it was written (operator-only fields included), newest first: for checking its chains. */
  all(tenant: string): Promise<AuditEvent[]>;
}

const listKey = (tenant: string): string => `audit-recent:${encodeURIComponent(tenant)}`;
// Entries a filtered query reads from the store at a time.
const PAGE_SIZE = 256;

/**
 * What a tenant's admin may read of a kept event: never an operator-only `detail` (how the egress check saw
 * a host; which operator read the tenant's audit). The copy keeps it, so the copy's chain links can be checked.
 */
function tenantView(event: AuditEvent): AuditEvent {
  if ((event.event !== 'security' && event.event !== 'audit_read') || event.detail === undefined) return event;
  const { detail: _operatorOnly, ...view } = event;
  return view;
}

/**
 * A bounded copy of the audit events per tenant in the state store (a ring in memory, a capped Redis
 * list), so every replica's admin API can show recent events. With `max` 0 nothing is kept.
 */
export function createRecentAudit(options: { store: StateStore; max: number; log: Logger }): RecentAudit {
  const { store, max } = options;
  // While the store is down every call would log this; the store says once that it is down and counts
  // the failed writes (toolgate_store_unavailable_total{operation="pushCapped"}).
  const notWritten = (err: unknown): void => {
    if (!isStoreUnavailable(err)) options.log.warn({ err }, 'recent audit copy not written');
  };
  // The last tenant's list key: `encodeURIComponent` and a concatenation per event cost 0.8 µs of a hot-path
  // request (bench/results.md, hot7); one entry, so 100,000 tenants hold nothing more than one.
  let lastTenant: string | undefined;
  let lastKey = '';
  const keyOf = (tenant: string): string => {
    if (tenant !== lastTenant) {
      lastKey = listKey(tenant);
      lastTenant = tenant;
    }
    return lastKey;
  };
  return {
    tee(sink, also) {
      if (max === 0 && !also) return sink;
      return {
        // The copy needs the events even when the configured sink is `off`.
        enabled: true,
        write(event) {
          if (sink.enabled !== false) sink.write(event);
          also?.(event);
          // Nothing of an event without a configured tenant (a refused token, a tenant that does not exist):
          // no store list is made for a name a caller chose.
          if (max > 0 && event.tenant !== null) store.pushCapped(keyOf(event.tenant), JSON.stringify(event), max).catch(notWritten);
        },
        flush: () => sink.flush(),
        close: () => sink.close(),
      };
    },
    async query(tenant, query) {
      if (max === 0) return [];
      const matches = (event: AuditEvent): boolean =>
        event.tenant === tenant &&
        (query.user === undefined || event.user === query.user) &&
        (query.tool === undefined || ('tool' in event && event.tool === query.tool)) &&
        (query.outcome === undefined || event.outcome === query.outcome) &&
        (query.since === undefined || event.time >= query.since) &&
        (query.until === undefined || event.time <= query.until);
      const filtered = query.user !== undefined || query.tool !== undefined || query.outcome !== undefined || query.since !== undefined || query.until !== undefined;
      const found: AuditEvent[] = [];
      // Each write between two pages shifts the list by one entry, so a page can start with entries already matched.
      const matched = new Set<string>();
      // Newest first, page by page, stopping at `limit` matches: a query holds one page and its matches, and
      // never reads past the copy's `max` entries. Unfiltered, every entry matches: read exactly what is missing.
      for (let offset = 0; offset < max && found.length < query.limit; ) {
        const size = Math.min(max - offset, filtered ? PAGE_SIZE : query.limit - found.length);
        const page = await store.recent(listKey(tenant), size, offset);
        for (const raw of page) {
          if (matched.has(raw)) continue;
          const event = JSON.parse(raw) as AuditEvent;
          if (!matches(event)) continue;
          matched.add(raw);
          found.push(tenantView(event));
          if (found.length >= query.limit) break;
        }
        if (page.length < size) break;
        offset += page.length;
      }
      return found;
    },
    async all(tenant) {
      if (max === 0) return [];
      return (await store.recent(listKey(tenant), max, 0)).map((raw) => JSON.parse(raw) as AuditEvent);
    },
  };
}
