// Bench section "anchors": toolgate against what its own libraries allow, measured in the same run.
// - hot path: toolgate's POST /v1/execute of the demo get_weather function tool with an HS256 JWT (token cache
//   on, validation, metrics, info logging, audit off) against the minimal composition of the same libraries
//   (bench/gateway/composition-server.ts) and the bare Fastify route;
// - MCP: toolgate's POST /v1/execute → server-everything `echo` over stdio (API key) against the floor, a
//   Fastify route holding one SDK stdio client (bench/mcp-targets.ts `floor`).
// Servers (and their stdio upstreams) pinned to core 1, autocannon to core 0 (bench/pinned.ts); every
// round starts every server afresh and warms it, the order alternating (bench/gateway/targets.ts).
// toolgate's own work per request is 1e6/toolgate − 1e6/anchor µs (from req/s, the server owning one core),
// and the same difference in server CPU per request read from /proc (steadier on a shared machine).
// Env as bench/gateway.ts (BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS), BENCH_MCP_CONNECTIONS
// (default 16), BENCH_QUICK=1 for a smoke run (1 round × 1 s, 1 s warm-up).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { optionsFromEnv } from './gateway.js';
import { benchRequest, measureRounds, type Target } from './gateway/targets.js';
import { BENCH_API_KEY, BENCH_METRICS_TOKEN } from './mcp-keys.js';
import { hasTaskset } from './pinned.js';
import { aggregate, roundRatios } from './summary.js';

const mcpTargets = fileURLToPath(new URL('./mcp-targets.ts', import.meta.url));
const fmt = (value: number, digits = 0): string => value.toFixed(digits);

export interface AnchorOptions {
  durationSec: number;
  rounds: number;
  warmupSec: number;
  connections: number;
  mcpConnections: number;
}

export function anchorOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AnchorOptions {
  const gateway = optionsFromEnv(env);
  const mcp = Number(env.BENCH_MCP_CONNECTIONS);
  const options = { ...gateway, mcpConnections: Number.isInteger(mcp) && mcp > 0 ? mcp : 16 };
  return env.BENCH_QUICK === '1' ? { ...options, durationSec: 1, rounds: 1, warmupSec: 1 } : options;
}

/** One row of the table: a target, and toolgate's ratio and own work against its anchor when it has one. */
function row(label: string, target: Target, anchor?: Target): string {
  const result = aggregate(target.runs);
  const cpu = result.cpuMicros === undefined ? '—' : fmt(result.cpuMicros, 1);
  if (!anchor) return `| ${label} | ${fmt(result.rps)} | ${fmt(result.p99, 2)} | ${cpu} | — | — | — | — |`;
  const base = aggregate(anchor.runs);
  const ownWall = 1e6 / result.rps - 1e6 / base.rps;
  const ownCpu = result.cpuMicros !== undefined && base.cpuMicros !== undefined ? fmt(result.cpuMicros - base.cpuMicros, 1) : '—';
  const rounds = roundRatios(target.runs, anchor.runs);
  const perRound = `${fmt(rounds.median, 2)} (${fmt(rounds.min, 2)}–${fmt(rounds.max, 2)})`;
  return `| ${label} | ${fmt(result.rps)} | ${fmt(result.p99, 2)} | ${cpu} | **${fmt(result.rps / base.rps, 2)}** | ${perRound} | ${fmt(ownWall, 1)} | ${ownCpu} |`;
}

export async function bench(options: Partial<AnchorOptions> = {}): Promise<string> {
  const { durationSec, rounds, warmupSec, connections, mcpConnections } = { ...anchorOptionsFromEnv(), ...options };
  const timing = { durationSec, warmupSec };

  const hot: [Target, Target, Target] = [
    { label: 'bare Fastify route', script: 'bare-server.ts', env: {}, runs: [] },
    { label: 'minimal composition', script: 'composition-server.ts', env: {}, runs: [] },
    { label: 'toolgate hot path', script: 'toolgate-server.ts', env: { BENCH_CHAIN: 'hot-path' }, runs: [] },
  ];
  await measureRounds(hot, rounds, { ...timing, connections, ...(await benchRequest()) });

  const mcp: [Target, Target] = [
    { label: 'MCP floor', script: mcpTargets, args: ['floor'], env: {}, runs: [] },
    { label: 'toolgate MCP', script: mcpTargets, args: ['toolgate'], env: {}, metricsToken: BENCH_METRICS_TOKEN, runs: [] },
  ];
  await measureRounds(mcp, rounds, {
    ...timing,
    connections: mcpConnections,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_API_KEY}` },
    body: JSON.stringify({ name: 'echo', arguments: { message: 'hello' } }),
  });

  const [bare, composition, toolgate] = hot;
  const [floor, toolgateMcp] = mcp;
  return [
    '## Anchors: toolgate against what its own libraries allow',
    '',
    `${rounds} round(s) × ${durationSec} s per target after ${warmupSec} s warm-up, every server fresh each round, the order alternating; ` +
      `hot path ${connections} connections, MCP ${mcpConnections}. ` +
      (hasTaskset ? 'Servers and their stdio upstreams pinned to core 1, autocannon to core 0 (taskset).' : 'taskset not found: processes are not pinned, numbers are noisier.'),
    '',
    'Minimal composition: Fastify + jose HS256 verify + an LRU of verified tokens (lru-cache) + pino (Fastify\'s two lines per request, ' +
      'to /dev/null) + one prom-client histogram observation (bench/gateway/composition-server.ts). MCP floor: Fastify + one SDK stdio ' +
      'client → server-everything (bench/mcp-targets.ts). toolgate hot path: JWT (cache on), validation, metrics, info logging, audit off. ' +
      "toolgate MCP: global stdio service, API key, audit off. Own work: 1e6/toolgate − 1e6/anchor req/s, and the difference in server CPU " +
      'per request (/proc; MCP counts the stdio upstream too). Per round: toolgate over its anchor within each round, where both ran on ' +
      'about the same machine (its speed drifts between rounds and between runs).',
    '',
    '| target | req/s | p99 ms | server CPU µs/req | ratio to anchor | per round: median (min–max) | own work µs/req (req/s) | own work µs/req (CPU) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('bare Fastify route', bare),
    row('minimal composition', composition),
    row('**toolgate `POST /v1/execute`, function echo, JWT** (anchor: composition)', toolgate, composition),
    row('MCP floor: Fastify + SDK client → stdio echo', floor),
    row('**toolgate, same upstream (global MCP over stdio, API key)** (anchor: floor)', toolgateMcp, floor),
    '',
    `Failed requests: ${[bare, composition, toolgate, floor, toolgateMcp].reduce((sum, target) => sum + aggregate(target.runs).failures, 0)}.`,
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await bench());
}
