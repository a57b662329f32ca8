// A typed door to autocannon (it ships no types): only what the benches use.
import { createRequire } from 'node:module';

export interface LoadOptions {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
}

export interface LoadResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  non2xx: number;
}

const autocannon = createRequire(import.meta.url)('autocannon') as (options: LoadOptions) => Promise<LoadResult>;

export function load(options: LoadOptions): Promise<LoadResult> {
  return autocannon(options);
}
