import type { Registry } from 'prom-client';
import { tenantLabels, tenantsAtZero } from '../observability/tenant-label.js';
import { counter, gauge, histogram, METRICS } from '../observability/metric-table.js';
import type { ApprovalRecord, ApprovalService } from './types.js';

const DECISIONS = ['approved', 'denied', 'expired'] as const satisfies ReadonlyArray<Exclude<ApprovalRecord['status'], 'pending'>>;
/** Both backlog gauges of one scrape (and scrapers arriving together) share one read of the shared store. */
const BACKLOG_MAX_AGE_MS = 1_000;

export interface ApprovalMetrics {
  /** Counts a decision and its wait; pass as the approval service's `onDecided`. */
  decided(record: ApprovalRecord): void;
  /** Reports the backlog of `approvals` from now on (read when metrics are scraped). */
  watch(approvals: ApprovalService): void;
  /** The configured tenants (the whole list, on every change; a view that can be read again is kept, not copied): decision counts start at 0 when they all fit under the label bound (`tenantsAtZero`), and the backlog gauges report them. */
  knownTenants(tenants: Iterable<string>): void;
}

/**
 * Approval metrics, labelled by tenant (records are only created for configured tenants) and decision.
 * The backlog gauges read the count the shared store keeps per tenant (one read per configured tenant, never
 * the records), so every replica reports the same figure: aggregate them with `max by (tenant)`, not `sum`.
 */
type Backlog = Map<string, { count: number; nextExpiresAt: number }>;

export function createApprovalMetrics(registry: Registry, now: () => number = Date.now): ApprovalMetrics {
  const decisions = counter(registry, METRICS.approvalDecisions);
  const wait = histogram(registry, METRICS.approvalWait);
  const tenantLabel = tenantLabels(registry);
  // Tenants past the label bound share one series: their backlogs add up, the soonest expiry wins.
  const labelled = (pending: Backlog): Backlog => {
    const merged: Backlog = new Map();
    for (const [tenant, { count, nextExpiresAt }] of pending) {
      const label = tenantLabel(tenant);
      const seen = merged.get(label);
      merged.set(label, seen ? { count: seen.count + count, nextExpiresAt: Math.min(seen.nextExpiresAt, nextExpiresAt) } : { count, nextExpiresAt });
    }
    return merged;
  };
  let approvals: ApprovalService | undefined;
  let tenants: Iterable<string> = [];
  let backlog: { at: number; read: Promise<Backlog> } | undefined;
  // A store that cannot answer leaves the gauges empty for that scrape (alerts on the store see why).
  const readBacklog = (): Promise<Backlog> => {
    const at = now();
    if (!approvals) return Promise.resolve(new Map());
    if (!backlog || at - backlog.at > BACKLOG_MAX_AGE_MS) {
      backlog = { at, read: approvals.pendingByTenant(tenants).then(labelled, (): Backlog => new Map()) };
    }
    return backlog.read;
  };
  gauge(registry, METRICS.approvalsPending, {
    async collect() {
      this.reset();
      const pending = await readBacklog();
      for (const [tenant, { count }] of pending) this.set({ tenant }, count);
    },
  });
  gauge(registry, METRICS.approvalsNextExpiry, {
    async collect() {
      this.reset();
      const pending = await readBacklog();
      const at = now();
      for (const [tenant, { nextExpiresAt }] of pending) this.set({ tenant }, Math.max(0, (nextExpiresAt - at) / 1000));
    },
  });
  return {
    decided(record) {
      decisions.inc({ tenant: tenantLabel(record.tenant), decision: record.status });
      // An expiry is settled lazily, on the first touch after it: the request waited until its expiry, not until then.
      const decidedAt = record.decidedAt ?? now();
      const end = record.status === 'expired' ? Math.min(decidedAt, record.expiresAt) : decidedAt;
      wait.observe({ decision: record.status }, Math.max(0, (end - record.createdAt) / 1000));
    },
    watch(service) {
      approvals = service;
    },
    knownTenants(known) {
      // A view read again at each scrape is kept as it is (at 100,000 tenants a copy of every id stayed in the
      // heap); an iterator, which reads once, is copied.
      tenants = isIterator(known) ? [...known] : known;
      const labels = new Set<string>();
      for (const tenant of tenantsAtZero(registry, tenants)) labels.add(tenantLabel(tenant));
      for (const tenant of labels) for (const decision of DECISIONS) decisions.inc({ tenant, decision }, 0);
    },
  };
}

/** Whether `items` is a one-pass iterator (its iterator is itself) rather than something read again on each pass. */
function isIterator(items: Iterable<string>): boolean {
  const iterator: unknown = items[Symbol.iterator]();
  return iterator === items;
}
