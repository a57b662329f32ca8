// Bench section "gateway": toolgate's hot path (/v1/execute of an in-process tool with a JWT, validation,
// metrics and logging) against a bare Fastify route doing the same JSON work, plus the cost of JWT
// verification with the token cache off. Loopback only, bounded. Each server runs in its own process
// pinned to core 1 and the load generator on core 0 (when taskset exists), and runs alternate so
// drift (thermal, other load) spreads over every target instead of biasing one.
// Every round starts every server afresh: on this VM one process of the very same server can run 1.5×
// slower than another for tens of seconds (all its code alike, native code included, with the same
// syscalls per request), so a target measured in a single process measured that process's luck.
// Each server is warmed for 4 s before its measured run: with every thread of the server pinned to one core,
// V8's optimising compiler competes with the requests, and toolgate (far more code than the bare route) was
// still compiling after 2 s (first 2 s window ~36 µs of CPU per request, 28–29 in every later one; p99 4 ms
// against 2), so a 2 s warm-up measured the JIT as much as the gateway.
// Env: BENCH_DURATION (s per run, default 2), BENCH_ROUNDS (default 4), BENCH_CONNECTIONS (32), BENCH_WARMUP
// (s per server per round, default 4). Defaults keep the whole `npm run bench` under 5 minutes on 2 cores.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../src/config/demo.js';
import type { LoadSpec } from './gateway/load.js';
import { benchToken } from './gateway/token.js';
import { firstLine, hasTaskset, nodeCommand, pinProcess, processCpuMicros, runLoad, SERVER_CORE, stopChild } from './pinned.js';
import { aggregate, type Aggregate, type MeasuredRun } from './summary.js';

const here = join(packageRoot(), 'bench', 'gateway');

interface Target {
  label: string;
  script: string;
  env: Record<string, string>;
  child?: ChildProcess;
  port?: number;
  runs: MeasuredRun[];
}

const positive = (value: string | undefined, fallback: number): number => {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
};

async function startServer(target: Target): Promise<void> {
  // Servers start up on both cores (four start-ups on one core took 13 s of every round) and are pinned
  // to the server core once listening.
  const [command, args] = nodeCommand(undefined, join(here, target.script));
  const child = spawn(command, args, { cwd: packageRoot(), env: { ...process.env, ...target.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  target.child = child;
  const { port } = await firstLine(child, target.label, 30_000, (line) => JSON.parse(line) as { port: number });
  pinProcess(child.pid, SERVER_CORE);
  target.port = port;
}

const stopServer = (target: Target): Promise<void> => stopChild(target.child);

/** One measured run (after its warm-up, when the spec has one, in the same load process). */
async function drive(target: Target, spec: Omit<LoadSpec, 'url'>): Promise<MeasuredRun> {
  let before = processCpuMicros(target.child?.pid);
  const run = await runLoad({ ...spec, url: `http://127.0.0.1:${target.port}/v1/execute` }, target.label, () => {
    before = processCpuMicros(target.child?.pid);
  });
  const after = processCpuMicros(target.child?.pid);
  if (before === undefined || after === undefined || run.requests === 0) return run;
  return { ...run, serverCpuMicrosPerRequest: (after - before) / run.requests };
}

/** One request before any load: the target must answer 200 with ok:true, or the numbers mean nothing. */
async function checkTarget(target: Target, headers: Record<string, string>, body: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${target.port}/v1/execute`, { method: 'POST', headers, body });
  const result = (await response.json()) as { ok?: boolean };
  if (response.status !== 200 || result.ok !== true) throw new Error(`${target.label} answered ${response.status} ${JSON.stringify(result)}`);
}

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

  const token = await benchToken();
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const body = JSON.stringify({ name: 'get_weather', arguments: { city: 'Paris' } });
  const targets: Target[] = [
    { label: 'bare Fastify route', script: 'bare-server.ts', env: {}, runs: [] },
    { label: 'toolgate (JWT, token cache on)', script: 'toolgate-server.ts', env: {}, runs: [] },
    { label: 'toolgate hot path only (JWT cache on; audit off, no rate limit)', script: 'toolgate-server.ts', env: { BENCH_CHAIN: 'hot-path' }, runs: [] },
    { label: 'toolgate (JWT, token cache off)', script: 'toolgate-server.ts', env: { BENCH_AUTH_CACHE_MAX: '0' }, runs: [] },
  ];
  const [bare, cached, hotPath, uncached] = targets as [Target, Target, Target, Target];

  for (let round = 0; round < rounds; round += 1) {
    try {
      // Fresh processes each round; each is warmed just before its measured run.
      await Promise.all(targets.map(startServer));
      for (const target of targets) await checkTarget(target, headers, body);
      // Alternate the order each round as well, so no target always runs first.
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) target.runs.push(await drive(target, { connections, durationSec, warmupSec, headers, body }));
    } finally {
      await Promise.all(targets.map(stopServer));
    }
  }

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
    'toolgate logs JSON at info level through the line writer `npm start` uses on stdout, aimed at /dev/null; validation and metrics on. ' +
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
