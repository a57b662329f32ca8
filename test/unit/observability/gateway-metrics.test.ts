import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/observability/gateway-metrics.js';
import { createPolicyMetrics } from '../../../src/pipeline/policy-metrics.js';
import type { ToolResult } from '../../../src/call/types.js';
import { makeTool } from '../../helpers/policy-fixtures.js';

const result = (durationMs: number): ToolResult => ({ callId: 'c', name: 'get_weather', ok: true, output: '', source: 'function', durationMs, truncated: false, trace: null });

/** The exposition lines of one metric family (HELP and TYPE included), in order. */
const family = (text: string, name: string): string[] => text.split('\n').filter((line) => line.includes(name));

describe('gateway metrics exposition', () => {
  it('exposes a call-duration histogram with inclusive bounds, +Inf, sum and count per tool and source', async () => {
    const metrics = createMetrics({ defaultMetrics: false, durationBuckets: [0.001, 0.01, 0.1, 1, 10] });
    const weather = makeTool({ name: 'get_weather' });
    for (const ms of [0.4, 1, 50, 0]) metrics.recordCall('acme', weather, result(ms));
    metrics.recordCall('acme', makeTool({ name: 'echo' }), result(42_000));
    expect(family(await metrics.registry.metrics(), 'toolgate_tool_call_duration_seconds')).toEqual([
      '# HELP toolgate_tool_call_duration_seconds Tool call duration',
      '# TYPE toolgate_tool_call_duration_seconds histogram',
      'toolgate_tool_call_duration_seconds_bucket{le="0.001",tool="get_weather",source="function"} 3',
      'toolgate_tool_call_duration_seconds_bucket{le="0.01",tool="get_weather",source="function"} 3',
      'toolgate_tool_call_duration_seconds_bucket{le="0.1",tool="get_weather",source="function"} 4',
      'toolgate_tool_call_duration_seconds_bucket{le="1",tool="get_weather",source="function"} 4',
      'toolgate_tool_call_duration_seconds_bucket{le="10",tool="get_weather",source="function"} 4',
      'toolgate_tool_call_duration_seconds_bucket{le="+Inf",tool="get_weather",source="function"} 4',
      'toolgate_tool_call_duration_seconds_sum{tool="get_weather",source="function"} 0.0514',
      'toolgate_tool_call_duration_seconds_count{tool="get_weather",source="function"} 4',
      'toolgate_tool_call_duration_seconds_bucket{le="0.001",tool="echo",source="function"} 0',
      'toolgate_tool_call_duration_seconds_bucket{le="0.01",tool="echo",source="function"} 0',
      'toolgate_tool_call_duration_seconds_bucket{le="0.1",tool="echo",source="function"} 0',
      'toolgate_tool_call_duration_seconds_bucket{le="1",tool="echo",source="function"} 0',
      'toolgate_tool_call_duration_seconds_bucket{le="10",tool="echo",source="function"} 0',
      'toolgate_tool_call_duration_seconds_bucket{le="+Inf",tool="echo",source="function"} 1',
      'toolgate_tool_call_duration_seconds_sum{tool="echo",source="function"} 42',
      'toolgate_tool_call_duration_seconds_count{tool="echo",source="function"} 1',
    ]);
  });

  it('spreads sub-millisecond calls over the default buckets, from 100 µs', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    for (const ms of [0.05, 0.1, 0.2, 0.4, 0.9]) metrics.recordCall('acme', makeTool({ name: 't' }), result(ms));
    const text = await metrics.registry.metrics();
    expect(text).toContain('toolgate_tool_call_duration_seconds_bucket{le="0.0001",tool="t",source="function"} 2');
    expect(text).toContain('toolgate_tool_call_duration_seconds_bucket{le="0.00025",tool="t",source="function"} 3');
    expect(text).toContain('toolgate_tool_call_duration_seconds_bucket{le="0.001",tool="t",source="function"} 5');
    expect(text).toContain('toolgate_tool_call_duration_seconds_bucket{le="60",tool="t",source="function"} 5');
  });

  it('counts calls per tool, source, outcome and per tenant, and a non-finite duration without observing it', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const tool = makeTool({ name: 'get_weather' });
    metrics.recordCall('acme', tool, result(Number.NaN));
    metrics.recordCall('acme', tool, result(Number.POSITIVE_INFINITY));
    metrics.countHttp('POST', '/v1/execute', '200');
    metrics.countHttp('POST', '/v1/execute', '200');
    const text = await metrics.registry.metrics();
    expect(text).toContain('toolgate_tool_calls_total{tool="get_weather",source="function",outcome="ok"} 2');
    expect(text).toContain('toolgate_tenant_calls_total{tenant="acme",outcome="ok"} 2');
    expect(text).toContain('toolgate_http_requests_total{method="POST",route="/v1/execute",status="200"} 2');
    expect(text).not.toMatch(/toolgate_tool_call_duration_seconds_count\{tool="get_weather",source="function"\} [1-9]/);
    metrics.registry.resetMetrics();
    expect(await metrics.registry.metrics()).not.toContain('toolgate_tool_calls_total{');
  });

  it('observes each upstream attempt by service and outcome, and counts decisions through a looked-up cell', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const policy = createPolicyMetrics(metrics.registry, { durationBuckets: [0.1, 1] });
    const tool = makeTool({ name: 'search', service: 'docs' });
    policy.upstreamCall(tool, result(0), 0.05);
    policy.upstreamCall(tool, result(0), Number.NaN);
    const pass = policy.decisionCell('access', 'pass');
    pass.inc();
    pass.inc();
    policy.decision('access', 'pass');
    const text = await metrics.registry.metrics();
    expect(text).toContain('toolgate_upstream_call_duration_seconds_bucket{le="0.1",service="docs",outcome="ok"} 1');
    expect(text).toContain('toolgate_upstream_call_duration_seconds_count{service="docs",outcome="ok"} 1');
    expect(text).toContain('toolgate_policy_decisions_total{policy="access",decision="pass"} 3');
  });
});
