// The load generator in its own process (pinned apart from the server): one autocannon run whose
// summary is printed as one JSON line. Input: a JSON LoadSpec as argv[2]. With `warmupSec`, a warm-up
// run comes first and `{"warmedUp":true}` is printed between the two (the caller starts counting then).
import autocannon from 'autocannon';

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

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const load = (durationSec: number) =>
  autocannon({ url: spec.url, method: 'POST', connections: spec.connections, duration: durationSec, headers: spec.headers, body: spec.body });
if (spec.warmupSec !== undefined && spec.warmupSec > 0) {
  await load(spec.warmupSec);
  process.stdout.write(`${JSON.stringify({ warmedUp: true })}\n`);
}
const result = await load(spec.durationSec);
const summary: LoadSummary = {
  requestsPerSec: result.requests.average,
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
