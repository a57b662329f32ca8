// The load generator in its own process (pinned apart from the server): one autocannon run whose
// summary is printed as one JSON line. Input: a JSON LoadSpec as argv[2]. With `warmupSec`, a warm-up
// run comes first and `{"warmedUp":true}` is printed between the two (the caller starts counting then).
import autocannon, { type Result } from 'autocannon';

export interface LoadSpec {
  url: string;
  connections: number;
  durationSec: number;
  headers: Record<string, string>;
  body: string;
  /** Load to run, unmeasured, before the measured run (the same process: no second start-up). */
  warmupSec?: number;
}

export interface LoadSummary {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
}

/** The value below which `fraction` of the sorted values lie (nearest rank, as HdrHistogram reports percentiles). */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;

/**
 * One autocannon run, with the response time of every 2xx response kept at full precision: autocannon's
 * own histogram records whole milliseconds, and at 1–3 ms a p99 ratio in whole milliseconds is mostly
 * rounding (1.9 ms counts as 1). Only 2xx responses are kept, as autocannon's latency does.
 */
async function load(durationSec: number): Promise<{ result: Result; latencies: Float64Array }> {
  const times: number[] = [];
  const instance = autocannon({ url: spec.url, method: 'POST', connections: spec.connections, duration: durationSec, headers: spec.headers, body: spec.body });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
    if (statusCode >= 200 && statusCode < 300) times.push(responseTimeMs);
  });
  const result = await instance;
  return { result, latencies: Float64Array.from(times).sort() };
}

if (spec.warmupSec !== undefined && spec.warmupSec > 0) {
  await load(spec.warmupSec);
  process.stdout.write(`${JSON.stringify({ warmedUp: true })}\n`);
}
const { result, latencies } = await load(spec.durationSec);
const summary: LoadSummary = {
  requestsPerSec: result.requests.average,
  p50Ms: percentile(latencies, 0.5),
  p99Ms: percentile(latencies, 0.99),
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
