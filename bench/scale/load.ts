// Bounded load for `npm run test:scale`: `connections` workers send a mix of calls to one URL until
// stopped or the time bound, whichever comes first, and count what came back. Loopback only.
import { Pool } from 'undici';

export interface LoadRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  token: string;
  body?: unknown;
}

/** What a response means for this run: an expected answer (by its outcome) or a failure. */
export type Outcome = { answered: true; outcome: string } | { answered: false; outcome: string };

export interface LoadCounts {
  sent: number;
  answered: number;
  failed: number;
  /** Answers and failures by `<kind> <outcome>`, e.g. `limited RATE_LIMITED`, `slow 502`. */
  byOutcome: Map<string, number>;
  /** Latencies (ms) of every request, answered or not. */
  latencies: number[];
}

export interface LoadRun {
  /** Counts since the last `take()`, then starts a new window (phases read their own). */
  take(): LoadCounts;
  stop(): Promise<void>;
}

const emptyCounts = (): LoadCounts => ({ sent: 0, answered: 0, failed: 0, byOutcome: new Map(), latencies: [] });

/** The outcome of a toolgate answer: its HTTP status plus the ToolResult's errorType when there is one. */
export function classify(status: number, body: string): Outcome {
  if (status === 200 || status === 202 || status === 429) {
    let errorType: string | undefined;
    try {
      errorType = (JSON.parse(body) as { error?: { errorType?: string } }).error?.errorType;
    } catch {
      // a listing or a non-JSON body: the status says enough
    }
    return { answered: true, outcome: errorType ?? (status === 202 ? 'pending_approval' : 'ok') };
  }
  return { answered: false, outcome: String(status) };
}

export function startLoad(url: string, connections: number, next: (worker: number) => LoadRequest, maxSeconds: number): LoadRun {
  const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 4_000 });
  let counts = emptyCounts();
  let running = true;
  const deadline = Date.now() + maxSeconds * 1000;
  const count = (kind: string, outcome: Outcome, ms: number): void => {
    counts.sent += 1;
    if (outcome.answered) counts.answered += 1;
    else counts.failed += 1;
    const key = `${kind} ${outcome.outcome}`;
    counts.byOutcome.set(key, (counts.byOutcome.get(key) ?? 0) + 1);
    counts.latencies.push(ms);
  };
  const worker = async (index: number): Promise<void> => {
    while (running && Date.now() < deadline) {
      const request = next(index);
      const started = performance.now();
      try {
        const response = await pool.request({
          method: request.method,
          path: request.path,
          headers: { authorization: `Bearer ${request.token}`, ...(request.body ? { 'content-type': 'application/json' } : {}) },
          body: request.body ? JSON.stringify(request.body) : undefined,
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        });
        const text = await response.body.text();
        count(request.kind, classify(response.statusCode, text), performance.now() - started);
      } catch (error) {
        count(request.kind, { answered: false, outcome: (error as { code?: string }).code ?? 'network error' }, performance.now() - started);
      }
    }
  };
  const workers = Array.from({ length: connections }, (_, i) => worker(i));
  return {
    take() {
      const taken = counts;
      counts = emptyCounts();
      return taken;
    },
    async stop() {
      running = false;
      await Promise.all(workers);
      await pool.close();
    },
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
