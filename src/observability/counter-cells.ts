import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

/** One label set of a counter, looked up once by a caller that counts it on every call. */
export interface CounterCell {
  inc(): void;
}

/** The label object of one label set, values in `labelNames` order (missing ones empty). */
export function labelRecord<T extends string>(labelNames: readonly T[], values: readonly string[]): Record<T, string> {
  const labels = {} as Record<T, string>;
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
 * A prom-client Counter whose label sets count in plain numbers: `cell(a, b, c)` is the cell of one
 * label set (values in `labelNames` order, at most three), and the Counter's own `collect`, which
 * prom-client runs on every read, hands what the cells counted to the counter. prom-client's `inc`
 * converts, validates and hashes the label object on every call, even through a `labels()` child, and
 * several counters are bumped per request. Counts not read yet survive a registry reset. A cell shows
 * from the first read after its lookup, at 0 until counted: look a known label set up to start it at 0.
 */
export function cellCounter<T extends string>(
  config: Omit<CounterConfiguration<T>, 'collect' | 'labelNames'> & { labelNames: readonly T[] },
): { counter: Counter<T>; cell: (a: string, b?: string, c?: string) => CounterCell } {
  if (config.labelNames.length > 3) throw new Error('cellCounter supports at most three labels');
  const cells: Array<{ labels: LabelValues<T>; pending: number; shown: boolean; inc(): void }> = [];
  const counter = new Counter<T>({
    ...config,
    collect() {
      for (const cell of cells) {
        // A cell looked up but not counted yet is shown at 0 (a known label set starts at 0, not absent).
        if (cell.pending === 0 && cell.shown) continue;
        this.inc(cell.labels, cell.pending);
        cell.pending = 0;
        cell.shown = true;
      }
    },
  });
  const cell = labelLookup((...values) => {
    const created = {
      labels: labelRecord(config.labelNames, values),
      pending: 0,
      shown: false,
      inc() {
        created.pending += 1;
      },
    };
    cells.push(created);
    return created;
  });
  return { counter, cell };
}
