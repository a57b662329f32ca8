import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createApprovalMetrics } from '../../../src/approvals/approval-metrics.js';
import { createApprovalService } from '../../../src/approvals/service.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import type { ApprovalRecord } from '../../../src/approvals/types.js';

const record = (overrides: Partial<ApprovalRecord>): ApprovalRecord => ({
  id: 'a'.repeat(32),
  tenant: 'acme',
  status: 'approved',
  requester: { user: 'alice', roles: [], claims: {} },
  call: { name: 'create_ticket', arguments: {}, callId: 'c1', source: 'function' },
  requestId: 'r1',
  depth: 0,
  createdAt: 1_000_000,
  expiresAt: 1_000_000 + 600_000,
  ...overrides,
});

describe('approval metrics', () => {
  it('count decisions per tenant and time the wait; an expiry settled late waited only until its expiry', async () => {
    const registry = new Registry();
    const metrics = createApprovalMetrics(registry, () => 5_000_000);
    metrics.decided(record({ status: 'approved', decidedAt: 1_000_000 + 30_000 }));
    // Touched an hour after it expired: the wait is its 600 s, not the hour.
    metrics.decided(record({ status: 'expired', decidedAt: 1_000_000 + 600_000 + 3_600_000 }));
    const text = await registry.metrics();
    expect(text).toContain('toolgate_approval_decisions_total{tenant="acme",decision="approved"} 1');
    expect(text).toContain('toolgate_approval_decisions_total{tenant="acme",decision="expired"} 1');
    expect(text).toContain('toolgate_approval_wait_seconds_sum{decision="approved"} 30');
    expect(text).toContain('toolgate_approval_wait_seconds_sum{decision="expired"} 600');
    expect(text).not.toContain('alice');
  });

  it('report the backlog from the count the store keeps per tenant, reading no approval record', async () => {
    const inner = createMemoryStore();
    const reads: string[] = [];
    const store: StateStore = {
      ...inner,
      get: (key) => (reads.push(`get ${key}`), inner.get(key)),
      scan: (prefix) => (reads.push(`scan ${prefix}`), inner.scan(prefix)),
    };
    const approvals = createApprovalService({ store });
    const bounds = { maxPendingPerUser: 100, maxPendingPerTenant: 100, maxArgumentsBytes: 100_000 };
    for (let i = 0; i < 30; i += 1) {
      await approvals.create({
        principal: { tenant: i % 3 === 0 ? 'globex' : 'acme', user: `u${i}`, roles: [], claims: {} },
        call: { name: 'create_ticket', arguments: { title: 'x'.repeat(10_000) }, callId: `c${i}`, source: 'function' },
        requestId: 'r',
        depth: 0,
        expiresMs: 60_000,
        bounds,
      });
    }
    const registry = new Registry();
    const metrics = createApprovalMetrics(registry);
    metrics.watch(approvals);
    metrics.knownTenants(['acme', 'globex', 'initech']);
    reads.length = 0;
    const text = await registry.metrics();
    expect(text).toContain('toolgate_approvals_pending{tenant="acme"} 20');
    expect(text).toContain('toolgate_approvals_pending{tenant="globex"} 10');
    expect(text).not.toContain('toolgate_approvals_pending{tenant="initech"}');
    expect(text).toMatch(/toolgate_approvals_next_expiry_seconds\{tenant="acme"\} (59|60)/);
    expect(reads).toEqual([]);
  });

  it('reads the tenants of a view that can be read again at each scrape, and copies a one-pass iterator', async () => {
    const approvals = createApprovalService({ store: createMemoryStore() });
    const asked: string[][] = [];
    const watched = { ...approvals, pendingByTenant: (tenants: Iterable<string>) => (asked.push([...tenants]), approvals.pendingByTenant(tenants)) };
    let now = 0;
    const known = ['acme'];
    const view: Iterable<string> = { [Symbol.iterator]: () => known[Symbol.iterator]() };
    const registry = new Registry();
    const viewed = createApprovalMetrics(registry, () => now);
    viewed.watch(watched);
    viewed.knownTenants(view);
    await registry.metrics();
    known.push('globex');
    now += 5_000;
    await registry.metrics();
    expect(asked).toEqual([['acme'], ['acme', 'globex']]);

    const onceRegistry = new Registry();
    const once = createApprovalMetrics(onceRegistry, () => now);
    once.watch(watched);
    once.knownTenants(['initech', 'hooli'].values());
    asked.length = 0;
    await onceRegistry.metrics();
    now += 5_000;
    await onceRegistry.metrics();
    expect(asked).toEqual([['initech', 'hooli'], ['initech', 'hooli']]);
  });
});
