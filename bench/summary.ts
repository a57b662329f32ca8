// How both bench sections fold several autocannon runs of one target into one row.
import type { LoadSummary } from './gateway/load.js';

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One run, with the server's CPU per request when it could be read. */
export interface MeasuredRun extends LoadSummary {
  serverCpuMicrosPerRequest?: number;
}

export interface Aggregate {
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** Mean server CPU per request over the runs that have it. */
  cpuMicros?: number;
}

/** Mean throughput over the rounds; the median of each round's latency percentiles. */
export function aggregate(runs: MeasuredRun[]): Aggregate {
  const cpu = runs.flatMap((run) => (run.serverCpuMicrosPerRequest === undefined ? [] : [run.serverCpuMicrosPerRequest]));
  return {
    ...(cpu.length > 0 ? { cpuMicros: cpu.reduce((sum, value) => sum + value, 0) / cpu.length } : {}),
    rps: runs.reduce((sum, run) => sum + run.requestsPerSec, 0) / runs.length,
    p50: median(runs.map((run) => run.p50Ms)),
    p99: median(runs.map((run) => run.p99Ms)),
    failures: runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
  };
}

/** A ratio within each round, summarised over the rounds. */
export interface RoundRatios {
  median: number;
  min: number;
  max: number;
}

/**
 * `runs[i]` over `anchorRuns[i]`: req/s of two targets measured in the same round (measureRounds pushes one
 * run per target per round). The machine's speed drifts between rounds and between runs; within a round
 * both targets see about the same machine, so these ratios move less than the ratio of the means.
 */
export function roundRatios(runs: readonly MeasuredRun[], anchorRuns: readonly MeasuredRun[]): RoundRatios {
  if (runs.length === 0 || runs.length !== anchorRuns.length) throw new Error(`round ratios need the same rounds of both targets (${runs.length} and ${anchorRuns.length})`);
  const ratios = runs.map((run, round) => run.requestsPerSec / anchorRuns[round]!.requestsPerSec);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}
