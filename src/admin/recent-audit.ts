import type { AuditEvent, AuditSink } from '../audit/types.js';
import type { StateStore } from '../store/types.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Logger } from '../types.js';

export interface AuditQuery {
  user?: string;
  tool?: string;
  outcome?: string;
  /** Epoch ms: events at or after it. */
  since?: number;
  limit: number;
}

export interface RecentAudit {
  /** Wraps the configured sink: every event goes to it (the system of record) and to the bounded copy. */
  tee(sink: AuditSink, also?: (event: AuditEvent) => void): AuditSink;
  /** Newest first, the caller's tenant only (the key is built from the tenant, never from a query). */
  query(tenant: string, query: AuditQuery): Promise<AuditEvent[]>;
}

const listKey = (tenant: string): string => `audit-recent:${encodeURIComponent(tenant)}`;

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
  return {
    tee(sink, also) {
      if (max === 0 && !also) return sink;
      return {
        // The copy needs the events even when the configured sink is `off`.
        enabled: true,
        write(event) {
          if (sink.enabled !== false) sink.write(event);
          also?.(event);
          if (max > 0) store.pushCapped(listKey(event.tenant), JSON.stringify(event), max).catch((err: unknown) => notWritten(err));
        },
        flush: () => sink.flush(),
        close: () => sink.close(),
      };
    },
    async query(tenant, query) {
      if (max === 0) return [];
      const found: AuditEvent[] = [];
      for (const raw of await store.recent(listKey(tenant), max)) {
        const event = JSON.parse(raw) as AuditEvent;
        if (event.tenant !== tenant) continue;
        if (query.user !== undefined && event.user !== query.user) continue;
        if (query.tool !== undefined && event.tool !== query.tool) continue;
        if (query.outcome !== undefined && event.outcome !== query.outcome) continue;
        if (query.since !== undefined && event.time < query.since) continue;
        found.push(event);
        if (found.length >= query.limit) break;
      }
      return found;
    },
  };
}
