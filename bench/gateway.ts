// Bench section "gateway": toolgate's hot path (/v1/execute of an in-process tool with a JWT, validation,
// metrics and logging) against a bare Fastify route doing the same JSON work, plus the cost of JWT
// verification with the token cache off. Loopback only, bounded. Each server runs in its own process
// pinned to core 1 and the load generator on core 0 (when taskset exists), and runs alternate so
// drift (thermal, other load) spreads over every target instead of biasing one.
// Every round starts every server afresh (bench/gateway/targets.ts says why).
// Each server is warmed for 4 s before its measured run: with every thread of the server pinned to one core,
// V8's optimising compiler competes with the requests, and toolgate (far more code than the bare route) was
// still compiling after 2 s (first 2 s window ~36 µs of CPU per request, 28–29 in every later one; p99 4 ms
// against 2), so a 2 s warm-up measured the JIT as much as the gateway.
// Env: BENCH_DURATION (s per run, default 2), BENCH_ROUNDS (default 4), BENCH_CONNECTIONS (32), BENCH_WARMUP
// (s per server per round, default 4). Defaults keep the whole `npm run bench` under 5 minutes on 2 cores.
import { benchRequest, measureRounds, type Target } from './gateway/targets.js';
import { hasTaskset } from './pinned.js';
import { aggregate, type Aggregate } from './summary.js';

const positive = (value: string | undefined, fallback: number): number => {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
};

const fmt = (value: number, digits = 0): string => value.toFixed(digits);

/**
 * toolgate's own work per request, as server CPU over the bare route's. On a shared VM the req/s ratio
 * moves with the machine's state (a slower kernel adds the same microseconds to both targets, which
 * raises the ratio); this difference moves much less.
 */
function overheadLines(base: Aggregate, hotPath: Aggregate, fullChain: Aggregate): string[] {
  if (base.cpuMicros === undefined || hotPath.cpuMicros === undefined || fullChain.cpuMicros === undefined) return [];
  return [
    `Server CPU per request: bare route ${fmt(base.cpuMicros, 1)} µs; toolgate's own work on top of it ` +
      `${fmt(hotPath.cpuMicros - base.cpuMicros, 1)} µs on the hot path and ${fmt(fullChain.cpuMicros - base.cpuMicros, 1)} µs with the full chain.`,
    '',
  ];
}

export interface GatewayBenchOptions {
  durationSec: number;
  rounds: number;
  connections: number;
  warmupSec: number;
}

export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayBenchOptions {
  return {
    durationSec: positive(env.BENCH_DURATION, 2),
    rounds: Math.max(1, Math.floor(positive(env.BENCH_ROUNDS, 4))),
    connections: Math.max(1, Math.floor(positive(env.BENCH_CONNECTIONS, 32))),
    warmupSec: positive(env.BENCH_WARMUP, 4),
  };
}

export async function bench(options: Partial<GatewayBenchOptions> = {}): Promise<string> {
  const { durationSec, rounds, connections, warmupSec } = { ...optionsFromEnv(), ...options };

  const { headers, body } = await benchRequest();
  const targets: Target[] = [
    { label: 'bare Fastify route', script: 'bare-server.ts', env: {}, runs: [] },
    { label: 'toolgate (JWT, token cache on)', script: 'toolgate-server.ts', env: {}, runs: [] },
    { label: 'toolgate hot path only (JWT cache on; audit off, no rate limit)', script: 'toolgate-server.ts', env: { BENCH_CHAIN: 'hot-path' }, runs: [] },
    { label: 'toolgate (JWT, token cache off)', script: 'toolgate-server.ts', env: { BENCH_AUTH_CACHE_MAX: '0' }, runs: [] },
  ];
  const [bare, cached, hotPath, uncached] = targets as [Target, Target, Target, Target];
  await measureRounds(targets, rounds, { connections, durationSec, warmupSec, headers, body });

  const base = aggregate(bare.runs);
  const rows = targets.map((target) => {
    const result = aggregate(target.runs);
    const cpu = result.cpuMicros === undefined ? '—' : fmt(result.cpuMicros, 1);
    // Each round's ratio to the bare route's run of the same round (fresh processes, minutes apart at most).
    const perRound = target.runs.map((run, i) => fmt(run.requestsPerSec / bare.runs[i]!.requestsPerSec, 2)).join(' ');
    return `| ${target.label} | ${fmt(result.rps)} | ${fmt(result.p50, 2)} | ${fmt(result.p99, 2)} | ${fmt(result.rps / base.rps, 2)} | ${perRound} | ${fmt(result.p99 / base.p99, 2)} | ${cpu} | ${result.failures} |`;
  });
  const on = aggregate(cached.runs);
  const off = aggregate(uncached.runs);
  // Extra server CPU per request without the cache; without /proc, 1/rps (the server owns one core).
  const verifyMicros = off.cpuMicros !== undefined && on.cpuMicros !== undefined ? off.cpuMicros - on.cpuMicros : (1 / off.rps - 1 / on.rps) * 1e6;

  return [
    '## Gateway hot path: `POST /v1/execute` of `get_weather` with an HS256 JWT',
    '',
    `${connections} connections, ${rounds} round(s) × ${durationSec} s per target, alternating; every round starts every server afresh and warms it for ${warmupSec} s just before its run.`,
    hasTaskset ? 'Servers pinned to core 1, autocannon to core 0 (taskset).' : 'taskset not found: processes are not pinned, numbers are noisier.',
    'toolgate logs JSON at info level through the destination `npm start` uses on stdout, aimed at /dev/null; validation and metrics on. ' +
      'The cache-on and cache-off rows run the full policy chain (audit events to a JSONL file, an active per-user rate limit); ' +
      'the hot-path row is what issue 2 names (JWT, validation, metrics, logging) with the audit sink off and no rate limit configured.',
    '',
    '| target | req/s | p50 ms | p99 ms | req/s vs bare | req/s vs bare, per round | p99 vs bare | server CPU µs/req | non-2xx + errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...overheadLines(base, aggregate(hotPath.runs), on),
    `JWT verification: with the token cache ${fmt(on.rps)} req/s, without ${fmt(off.rps)} req/s ` +
      `(cache off = ${fmt(off.rps / on.rps, 2)} × cache on; ≈ ${fmt(Math.max(0, verifyMicros), 1)} µs of server time per verification).`,
    '',
  ].join('\n');
}
