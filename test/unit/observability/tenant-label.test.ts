import { describe, expect, it } from 'vitest';
import { createApprovalMetrics } from '../../../src/approvals/approval-metrics.js';
import { createMetrics } from '../../../src/observability/gateway-metrics.js';
import { tenantsAtZero } from '../../../src/observability/tenant-label.js';
import { createPolicyMetrics } from '../../../src/pipeline/policy-metrics.js';
import type { ToolResult } from '../../../src/call/types.js';
import { makeTool } from '../../helpers/policy-fixtures.js';

const ok: ToolResult = { callId: 'c', name: 'get_weather', ok: true, output: '', source: 'function', durationMs: 1, truncated: false, trace: null };

/** Every distinct `tenant` label value in the exposition. */
const tenantValues = (text: string): Set<string> => new Set([...text.matchAll(/tenant="([^"]*)"/g)].map((match) => match[1]!));

describe('per-tenant metric series', () => {
  it('stay within metrics.maxTenantSeries tenants whatever number of tenants is counted; the rest share __other__', async () => {
    const metrics = createMetrics({ defaultMetrics: false, maxTenantSeries: 3 });
    const policy = createPolicyMetrics(metrics.registry);
    const approvals = createApprovalMetrics(metrics.registry);
    const tool = makeTool({ name: 'get_weather' });
    const tenants = Array.from({ length: 5000 }, (_, i) => `tenant-${i}`);
    metrics.knownTenants(tenants.slice(0, 2));
    for (const tenant of tenants) {
      metrics.recordCall(tenant, tool, ok);
      metrics.countMcpSession(tenant);
      policy.rateLimited(tenant);
      approvals.decided({ tenant, status: 'approved', createdAt: 0, decidedAt: 1, expiresAt: 10 } as Parameters<typeof approvals.decided>[0]);
    }
    const text = await metrics.registry.metrics();
    expect(tenantValues(text)).toEqual(new Set(['tenant-0', 'tenant-1', 'tenant-2', '__other__']));
    expect(text).toContain('toolgate_tenant_calls_total{tenant="__other__",outcome="ok"} 4997');
    expect(text).toContain('toolgate_rate_limit_refusals_total{tenant="__other__"} 4997');
    expect(text).toContain('toolgate_tenant_calls_total{tenant="tenant-1",outcome="ok"} 1');
  });

  it('starts no configured tenant at 0 when they do not all fit under the bound: the series go to the tenants that call', async () => {
    const metrics = createMetrics({ defaultMetrics: false, maxTenantSeries: 3 });
    const policy = createPolicyMetrics(metrics.registry);
    const approvals = createApprovalMetrics(metrics.registry);
    const tool = makeTool({ name: 'get_weather' });
    const configured = Array.from({ length: 5 }, (_, i) => `tenant-${i}`);
    metrics.knownTenants(configured);
    policy.knownTenants(configured);
    // A one-pass iterator is read once, and not consumed by the check (its ids are still reported).
    approvals.knownTenants(configured.values());
    expect(tenantValues(await metrics.registry.metrics())).toEqual(new Set());
    metrics.recordCall('tenant-4', tool, ok);
    policy.rateLimited('tenant-3');
    const text = await metrics.registry.metrics();
    expect(tenantValues(text)).toEqual(new Set(['tenant-4', 'tenant-3']));
    expect(text).toContain('toolgate_tenant_calls_total{tenant="tenant-4",outcome="ok"} 1');
    expect(text).toContain('toolgate_rate_limit_refusals_total{tenant="tenant-3"} 1');
  });

  it('reads at most the bound plus one of the configured ids to decide', () => {
    const metrics = createMetrics({ defaultMetrics: false, maxTenantSeries: 3 });
    let read = 0;
    const many: Iterable<string> = {
      *[Symbol.iterator]() {
        for (let i = 0; i < 100_000; i += 1) {
          read += 1;
          yield `tenant-${i}`;
        }
      },
    };
    expect(tenantsAtZero(metrics.registry, many)).toEqual([]);
    expect(read).toBe(4);
    expect(tenantsAtZero(metrics.registry, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
  });
});
