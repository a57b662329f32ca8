// Pure batch scheduling (docs/architecture.md#batch): which calls run together, how many at once, and per-call timeouts.
// Knows nothing about tools or HTTP; the execute route supplies `classify`, `run` and `onTimeout`.

/** A deferred change to shared context, applied only after the call's whole group has finished. */
export type Effect = () => void | Promise<void>;

export interface RunContext {
  /** Aborts when this call times out or the whole batch is cancelled; never because of a sibling. */
  signal: AbortSignal;
  /** Epoch ms after which this call is answered TIMEOUT (undefined = no per-call limit). */
  deadline: number | undefined;
  /** Queues an effect for after the group (applied in input order). */
  defer(effect: Effect): void;
}

export interface BatchOptions<I, R> {
  /** True when the call may share a group (`isCallConcurrencySafe`; must not throw). */
  classify(item: I, index: number): boolean;
  /** Must resolve (failures are results); a rejection rejects the whole batch. */
  run(item: I, index: number, ctx: RunContext): Promise<R>;
  /** The result for a call that ran past its timeout (a TIMEOUT ToolResult). */
  onTimeout(item: I, index: number, timeoutMs: number): R;
  /** What a timed-out call's signal is aborted with (a caller's own cancellation reads differently). */
  timeoutReason?(timeoutMs: number): unknown;
  /** false runs every call alone, in order. Default true. */
  parallel?: boolean;
  /** Most calls of one group in flight at once. Default 4. */
  maxParallel?: number;
  /** Per-call limit in ms. */
  timeoutMs?: number;
  /** Cancels everything still running (client gone, shutdown). */
  signal?: AbortSignal;
  /** Observes each group's size (metrics). */
  onGroup?(size: number): void;
  now?(): number;
}

/** Splits indexes into execution groups: consecutive safe calls together, each unsafe call alone. */
export function planGroups(safe: readonly boolean[], parallel = true): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  safe.forEach((isSafe, index) => {
    if (parallel && isSafe) {
      current.push(index);
      return;
    }
    if (current.length > 0) groups.push(current);
    current = [];
    groups.push([index]);
  });
  if (current.length > 0) groups.push(current);
  return groups;
}

async function runOne<I, R>(item: I, index: number, options: BatchOptions<I, R>, effects: Effect[]): Promise<R> {
  // The call's own signal: its timeout aborts it alone, the batch's signal aborts them all. AbortSignal.any
  // adds no listener to the batch's signal, however many calls are in flight.
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const { timeoutMs } = options;
  const now = options.now ?? Date.now;
  const ctx: RunContext = {
    signal,
    deadline: timeoutMs === undefined ? undefined : now() + timeoutMs,
    defer: (effect) => effects.push(effect),
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const running = options.run(item, index, ctx);
    if (timeoutMs === undefined) return await running;
    const expiry = new Promise<R>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(options.timeoutReason?.(timeoutMs) ?? new Error('call timed out'));
        resolve(options.onTimeout(item, index, timeoutMs));
      }, timeoutMs);
    });
    // Answer on time even when `run` ignores its signal; race() also absorbs its late rejection.
    return await Promise.race([running, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a batch group by group; results come back in input order. */
export async function runBatch<I, R>(items: readonly I[], options: BatchOptions<I, R>): Promise<R[]> {
  const maxParallel = Math.max(1, options.maxParallel ?? 4);
  const safe = items.map((item, index) => options.classify(item, index));
  const results = new Array<R>(items.length);
  for (const group of planGroups(safe, options.parallel ?? true)) {
    options.onGroup?.(group.length);
    // Effects are keyed by position so they apply in input order, whatever order the calls finished in.
    const effects = group.map((): Effect[] => []);
    let cursor = 0;
    const worker = async (): Promise<void> => {
      while (cursor < group.length) {
        const slot = cursor++;
        const index = group[slot]!;
        results[index] = await runOne(items[index]!, index, options, effects[slot]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(maxParallel, group.length) }, worker));
    for (const effect of effects.flat()) await effect();
  }
  return results;
}
