import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createApprovalMetrics } from '../../../src/approvals/metrics.js';
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
});
