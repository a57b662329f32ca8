// The load generator in its own process (pinned apart from the server): one autocannon run whose
// summary is printed as one JSON line. Input: a JSON LoadSpec as argv[2].
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  connections: number;
  durationSec: number;
  headers: Record<string, string>;
  body: string;
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
const result = await autocannon({
  url: spec.url,
  method: 'POST',
  connections: spec.connections,
  duration: spec.durationSec,
  headers: spec.headers,
  body: spec.body,
});
const summary: LoadSummary = {
  requestsPerSec: result.requests.average,
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
