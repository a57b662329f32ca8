/**
 * Runs `run` once the current I/O callback is over, with its ticks and microtasks: one setImmediate for all
 * the callbacks queued in a loop turn. For timers most requests never need — a body that came with its
 * headers, a call answered within the turn that started it — arming them here costs a timer only to those
 * still waiting then (bench/results.md, hot8: a timer's set and clear cost more than the request's own use of it).
 */
let queued: Array<() => void> = [];

function runQueued(): void {
  const batch = queued;
  queued = [];
  for (const run of batch) {
    try {
      run();
    } catch (error) {
      // One failing callback must not drop the others' timers: it fails as an uncaught exception would.
      process.nextTick(() => {
        throw error;
      });
    }
  }
}

export function afterThisTurn(run: () => void): void {
  if (queued.length === 0) setImmediate(runQueued);
  queued.push(run);
}
