import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createPolicyMetrics } from '../../../src/pipeline/policy-metrics.js';

const scrape = (registry: Registry) => registry.metrics();

describe('policy metrics labels', () => {
  it('shows a shared circuit label at the worst state of its members, and forgets closed members', async () => {
    const registry = new Registry();
    const metrics = createPolicyMetrics(registry);
    metrics.circuitState('__user__', 'closed', 'acme\u0000user_a_service_x');
    metrics.circuitState('__user__', 'open', 'acme\u0000user_a_service_x');
    metrics.circuitState('__user__', 'half_open', 'acme\u0000user_b_service_y');
    expect(await scrape(registry)).toContain('toolgate_circuit_state{service="__user__"} 1');
    metrics.circuitState('__user__', 'closed', 'acme\u0000user_a_service_x');
    expect(await scrape(registry)).toContain('toolgate_circuit_state{service="__user__"} 2');
    metrics.circuitState('__user__', 'closed', 'acme\u0000user_b_service_y');
    metrics.circuitState('billing', 'open');
    const text = await scrape(registry);
    expect(text).toContain('toolgate_circuit_state{service="__user__"} 0');
    expect(text).toContain('toolgate_circuit_state{service="billing"} 1');
    expect(text).not.toContain('user_a');
  });

  it('counts a decision outside the known set as "other"', async () => {
    const registry = new Registry();
    const metrics = createPolicyMetrics(registry);
    metrics.decision('custom', 'caller says hi');
    metrics.decision('access', 'PERMISSION_DENIED');
    const text = await scrape(registry);
    expect(text).toContain('toolgate_policy_decisions_total{policy="custom",decision="other"} 1');
    expect(text).toContain('toolgate_policy_decisions_total{policy="access",decision="PERMISSION_DENIED"} 1');
    expect(text).not.toContain('caller says hi');
  });
});
