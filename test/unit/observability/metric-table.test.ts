// The metric table is the catalog of what toolgate exports: docs/operations.md lists the same metrics with
// the same labels, and a gateway registers exactly the table's entries, as the table describes them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../src/app.js';
import { demoConfig, packageRoot } from '../../../src/config/demo.js';
import { Histogram, Registry } from 'prom-client';
import { batchedHistogram, cellCounter, METRICS, OBSERVATION_BATCH, type MetricSpec } from '../../../src/observability/metric-table.js';

const table: readonly MetricSpec[] = Object.values(METRICS);

/** `toolgate_…{a,b}` entries of the metric list in docs/operations.md, as name → label names. */
function documented(): Map<string, string[]> {
  const text = readFileSync(join(packageRoot(), 'docs/operations.md'), 'utf8');
  const start = text.indexOf('Prometheus text');
  const end = text.indexOf('The duration histograms', start);
  expect(start, 'the metric list of docs/operations.md').toBeGreaterThan(-1);
  const list = text.slice(start, end);
  return new Map([...list.matchAll(/`(toolgate_[a-z_]+)(?:\{([a-z_,]*)\})?`/g)].map((match) => [match[1]!, match[2] ? match[2].split(',') : []]));
}

describe('the metric table', () => {
  it('names every metric once', () => {
    const names = table.map((spec) => spec.name);
    expect(new Set(names).size).toBe(names.length);
    for (const spec of table) expect(spec.name).toMatch(spec.type === 'counter' ? /^toolgate_[a-z_]+_total$/ : /^toolgate_[a-z_]+$/);
  });

  it('agrees with the metric list of docs/operations.md: the same names, each with the same labels', () => {
    const docs = documented();
    expect([...docs.keys()].sort()).toEqual(table.map((spec) => spec.name).sort());
    for (const spec of table) expect(docs.get(spec.name), spec.name).toEqual([...spec.labelNames]);
  });

  it('is what a gateway registers: every toolgate_ metric comes from the table, with its type, help and labels', async () => {
    const { config } = demoConfig({ TOOLGATE_DEV_API_KEY: 'metric-table-test', LOG_LEVEL: 'silent' });
    const app = await buildServer(config, { logger: false, defaultMetrics: false });
    try {
      await app.ready();
      const registered = (await app.metrics.registry.getMetricsAsJSON()).filter((metric) => metric.name.startsWith('toolgate_'));
      const byName = new Map(table.map((spec) => [spec.name, spec]));
      for (const metric of registered) {
        const spec = byName.get(metric.name);
        expect(spec, `${metric.name} is in the table`).toBeDefined();
        expect({ type: metric.type, help: metric.help }).toEqual({ type: spec!.type, help: spec!.help });
      }
    } finally {
      await app.close();
    }
  });
});

describe('cellCounter', () => {
  it('hands what its cells counted to the prom-client counter on each read, once, and shows a looked-up cell at 0', async () => {
    const registry = new Registry();
    const { counter, cell } = cellCounter(registry, METRICS.policyDecisions);
    const pass = cell('audit', 'pass');
    cell('audit', 'DENIED');
    pass.inc();
    pass.inc();
    const read = async (): Promise<Record<string, number>> =>
      Object.fromEntries((await counter.get()).values.map((value) => [`${value.labels.policy}/${value.labels.decision}`, value.value]));
    expect(await read()).toEqual({ 'audit/pass': 2, 'audit/DENIED': 0 });
    // A second read adds nothing twice; counts made between reads are added at the next.
    expect(await read()).toEqual({ 'audit/pass': 2, 'audit/DENIED': 0 });
    pass.inc();
    expect(cell('audit', 'pass')).toBe(cell('audit', 'pass'));
    expect(await registry.metrics()).toContain('toolgate_policy_decisions_total{policy="audit",decision="pass"} 3');
  });
});

describe('batchedHistogram', () => {
  it('shows at every read exactly what observing each value at once shows, across full buffers', async () => {
    const registry = new Registry();
    const { histogram, cell } = batchedHistogram(registry, METRICS.toolDuration, [0.001, 0.01, 0.1]);
    const plain = new Registry();
    const reference = new Histogram({ name: METRICS.toolDuration.name, help: 'h', labelNames: ['tool', 'source'], buckets: [0.001, 0.01, 0.1], registers: [plain] });
    const values = Array.from({ length: OBSERVATION_BATCH * 2 + 37 }, (_, i) => ((i * 7919) % 1000) / 7000);
    const observed = cell('t', 'function');
    expect(cell('t', 'function')).toBe(observed);
    const snapshot = async (metric: Histogram<'tool' | 'source'>): Promise<unknown> => (await metric.get()).values;
    for (const [index, value] of values.entries()) {
      observed.observe(value);
      reference.labels('t', 'function').observe(value);
      // Reads in the middle of a buffer and right at its end.
      if (index === 10 || index === OBSERVATION_BATCH - 1 || index === OBSERVATION_BATCH + 3) expect(await snapshot(histogram)).toEqual(await snapshot(reference));
    }
    expect(await snapshot(histogram)).toEqual(await snapshot(reference));
    expect(await registry.metrics()).toContain(`toolgate_tool_call_duration_seconds_count{tool="t",source="function"} ${values.length}`);
    // A label set looked up but never observed shows nothing, as a labels() child never observed.
    cell('idle', 'function');
    expect(await registry.metrics()).not.toContain('tool="idle"');
  });
});
