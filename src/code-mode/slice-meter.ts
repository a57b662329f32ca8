import { performance } from 'node:perf_hooks';

/**
 * The slice meter a sandbox worker shares with the main thread: while the worker computes one of its
 * scripts it marks when that slice started, whose script it is and the CPU time that script had used
 * before it; the main thread reads it to stop a slice that runs past its script's CPU limit inside one
 * native operation, which no interrupt reaches (docs/code-mode.md#limits). Int32 cells, written with Atomics.
 */
export const SLICE_STARTED = 0;
export const SLICE_RUN = 1;
export const SLICE_CPU_BEFORE = 2;
const SLICE_CELLS = 3;

export function newSliceMeter(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLICE_CELLS * Int32Array.BYTES_PER_ELEMENT);
}

/** Milliseconds since `epoch` (at least 1: 0 means no slice runs), on a clock both threads read alike. */
export const msSince = (epoch: number): number => Math.max(1, Math.round(performance.timeOrigin + performance.now() - epoch));

/** The worker's side: marks a slice of `run` starting (with the CPU its script used so far) or ending. */
export function markSlice(meter: Int32Array, epoch: number, run: number, cpuUsedMs: number, computing: boolean): void {
  if (!computing) {
    Atomics.store(meter, SLICE_STARTED, 0);
    return;
  }
  Atomics.store(meter, SLICE_RUN, run);
  Atomics.store(meter, SLICE_CPU_BEFORE, Math.floor(cpuUsedMs));
  Atomics.store(meter, SLICE_STARTED, msSince(epoch));
}

/** The main thread's side: the run computing now and the CPU time its script has used, or undefined when none is. */
export function readSlice(meter: Int32Array, epoch: number): { run: number; cpuMs: number } | undefined {
  const started = Atomics.load(meter, SLICE_STARTED);
  if (started === 0) return undefined;
  return { run: Atomics.load(meter, SLICE_RUN), cpuMs: Atomics.load(meter, SLICE_CPU_BEFORE) + (msSince(epoch) - started) };
}
