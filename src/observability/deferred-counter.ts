import type { Counter } from 'prom-client';

export interface CounterCell {
  inc(): void;
}

class Cell implements CounterCell {
  pending = 0;
  constructor(readonly labels: Record<string, string>) {}
  inc(): void {
    this.pending += 1;
  }
}

type Collectable = { collect?: (this: unknown) => unknown; reset(): void };

// One cell table per counter, shared by everyone who defers it (two chains on one registry count together).
const tables = new WeakMap<object, Map<string, Cell>>();

function tableFor(counter: Counter<string>): Map<string, Cell> {
  let table = tables.get(counter);
  if (table) return table;
  const cells = new Map<string, Cell>();
  table = cells;
  tables.set(counter, cells);
  const metric = counter as unknown as Collectable;
  const previous = metric.collect;
  // prom-client runs `collect` on every read (scrape, get()): the pending counts are handed over first.
  metric.collect = function collect(this: unknown) {
    for (const cell of cells.values()) {
      if (cell.pending === 0) continue;
      counter.inc(cell.labels, cell.pending);
      cell.pending = 0;
    }
    return previous?.call(this);
  };
  const reset = metric.reset.bind(metric);
  metric.reset = () => {
    for (const cell of cells.values()) cell.pending = 0;
    reset();
  };
  return table;
}

/** The label object of one label set, values in `labelNames` order (missing ones empty). */
export function labelRecord(labelNames: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
  return labels;
}

/**
 * Values found by up to three label values through one Map per label: no joined key string and no rest
 * arguments, since metric lookups run several times per call. Label values must be bounded, as for any
 * label. `make` runs once per distinct label set.
 */
export function labelLookup<T>(make: (a: string, b: string, c: string) => T): (a: string, b?: string, c?: string) => T {
  const root = new Map<string, Map<string, Map<string, T>>>();
  return (a, b = '', c = '') => {
    let second = root.get(a);
    if (second === undefined) root.set(a, (second = new Map()));
    let third = second.get(b);
    if (third === undefined) second.set(b, (third = new Map()));
    let value = third.get(c);
    if (value === undefined) third.set(c, (value = make(a, b, c)));
    return value;
  };
}

/**
 * Label cells of a counter that count in a plain number and hand their totals to prom-client when the
 * metric is read. prom-client hashes and validates the label object on every `inc`, even through a
 * `labels()` child, and several counters are bumped per request. `labelNames` are the counter's (at most
 * three), in the order the values are passed.
 */
export function deferredCounter<T extends string>(counter: Counter<T>, labelNames: readonly T[]): (a: string, b?: string, c?: string) => CounterCell {
  if (labelNames.length > 3) throw new Error('deferredCounter supports at most three labels');
  const table = tableFor(counter as unknown as Counter<string>);
  return labelLookup((...values) => {
    // Two lookups of one label set share a cell (the table also serves collect and reset).
    const key = values.join('\u0000');
    let cell = table.get(key);
    if (cell === undefined) {
      table.set(key, (cell = new Cell(labelRecord(labelNames, values))));
    }
    return cell;
  });
}
