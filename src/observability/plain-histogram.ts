import type { Registry } from 'prom-client';
import { labelLookup, labelRecord } from './counter-cells.js';

export interface HistogramCell {
  observe(value: number): void;
}

class Cell implements HistogramCell {
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf). */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i += 1;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

interface MetricValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * A Prometheus histogram whose label cells are plain numbers: `observe` is a bucket search and three
 * additions. prom-client's Histogram converts, validates and hashes the label set on every observe, even
 * through a `labels()` child, and this runs once per tool call. Registered on a prom-client Registry
 * through its public `registerMetric`; the exposition matches prom-client's Histogram (tested). At most
 * three labels, bounded values, as for any label.
 */
export class PlainHistogram<T extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly cells: Cell[] = [];
  private readonly bounds: readonly number[];
  private readonly lookup: (a: string, b?: string, c?: string) => Cell;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly T[],
    buckets: readonly number[],
    registry: Registry,
  ) {
    if (labelNames.length > 3) throw new Error('PlainHistogram supports at most three labels');
    this.bounds = [...buckets].sort((a, b) => a - b);
    this.lookup = labelLookup((...values) => {
      const cell = new Cell(labelRecord(labelNames, values), this.bounds);
      this.cells.push(cell);
      return cell;
    });
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The cell of one label set (values in `labelNames` order); keep it or look it up per call, both are cheap. */
  labels(a: string, b?: string, c?: string): HistogramCell {
    return this.lookup(a, b, c);
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const cell of this.cells) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += cell.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...cell.labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...cell.labels }, value: cell.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...cell.labels }, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...cell.labels }, value: cell.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const cell of this.cells) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}
