import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DURATION_BUCKETS } from '../../../src/observability/metrics.js';
import { PlainHistogram } from '../../../src/observability/plain-histogram.js';

const buckets = [0.001, 0.01, 0.1, 1, 10];
const observations: Array<[string, string, number]> = [
  ['get_weather', 'function', 0.0004],
  ['get_weather', 'function', 0.001], // on a bound: counts in that bucket (le is inclusive)
  ['get_weather', 'function', 0.05],
  ['echo', 'mcp', 3],
  ['echo', 'mcp', 42], // above every bound: +Inf only
  ['get_weather', 'function', 0],
  ['echo', 'builtin', 0.2],
];

function both() {
  const reference = new Registry();
  const plain = new Registry();
  const histogram = new Histogram({ name: 'calls_seconds', help: 'Call duration', labelNames: ['tool', 'source'], buckets, registers: [reference] });
  const ours = new PlainHistogram('calls_seconds', 'Call duration', ['tool', 'source'], buckets, plain);
  return { reference, plain, histogram, ours };
}

describe('PlainHistogram', () => {
  it('exposes exactly what prom-client\'s Histogram exposes for the same observations', async () => {
    const { reference, plain, histogram, ours } = both();
    expect(await plain.metrics()).toBe(await reference.metrics()); // nothing observed yet
    for (const [tool, source, value] of observations) {
      histogram.labels(tool, source).observe(value);
      ours.labels(tool, source).observe(value);
    }
    expect(await plain.metrics()).toBe(await reference.metrics());
    expect(await plain.metrics()).toContain('calls_seconds_bucket{le="0.001",tool="get_weather",source="function"} 3');
    // The JSON form too, but for prom-client's (empty) exemplar slots.
    const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      metrics.map((metric) => ({ ...metric, values: metric.values.map((entry) => ({ labels: entry.labels, value: entry.value, metricName: (entry as { metricName?: string }).metricName })) }));
    expect(withoutExemplars(await plain.getMetricsAsJSON())).toEqual(withoutExemplars(await reference.getMetricsAsJSON()));
  });

  it('keeps one cell per label set, and resets with the registry', async () => {
    const { reference, plain, histogram, ours } = both();
    const cell = ours.labels('a', 'b');
    expect(ours.labels('a', 'b')).toBe(cell);
    cell.observe(0.5);
    cell.observe(Number.NaN); // ignored, where prom-client would throw inside a tool call's bookkeeping
    histogram.labels('a', 'b').observe(0.5);
    expect(await plain.metrics()).toBe(await reference.metrics());
    plain.resetMetrics();
    reference.resetMetrics();
    expect(await plain.metrics()).toContain('calls_seconds_count{tool="a",source="b"} 0');
  });

  it('matches prom-client with the default duration buckets (sub-millisecond bounds included)', async () => {
    const reference = new Registry();
    const plain = new Registry();
    const histogram = new Histogram({ name: 'd_seconds', help: 'd', labelNames: ['tool'], buckets: [...DEFAULT_DURATION_BUCKETS], registers: [reference] });
    const ours = new PlainHistogram('d_seconds', 'd', ['tool'], DEFAULT_DURATION_BUCKETS, plain);
    for (const value of [0.00005, 0.0001, 0.0002, 0.0004, 0.0009, 0.003, 0.7, 45, 61]) {
      histogram.labels('t').observe(value);
      ours.labels('t').observe(value);
    }
    expect(await plain.metrics()).toBe(await reference.metrics());
    expect(await plain.metrics()).toContain('d_seconds_bucket{le="0.00025",tool="t"} 3');
  });
});
