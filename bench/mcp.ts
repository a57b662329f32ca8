// Issue 4 bench: server-everything `echo` over stdio, through toolgate's /v1/execute versus the floor —
// a minimal Fastify route holding one SDK client. Each server runs in its own process pinned to core 1
// with the stdio upstream it spawns (children inherit the affinity), so every target pays for its own
// upstream on the same core; autocannon runs in its own process on core 0. Runs alternate over rounds so
// drift spreads over every target. Loopback only, bounded (≈ 2 min with the defaults).
// Env: BENCH_MCP_SECONDS (per run, default 2), BENCH_MCP_ROUNDS (default 3), BENCH_MCP_WARMUP (s, default 2; once, before the first load).
// Defaults keep the whole `npm run bench` under 5 minutes on 2 cores.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packageRoot } from '../src/config/demo.js';
import type { LoadSummary } from './gateway/load.js';
import { failedCalls, roundOrder } from './gateway/targets.js';
import { BENCH_API_KEY, BENCH_METRICS_TOKEN } from './mcp-keys.js';
import { descendantPids, firstLine, hasTaskset, nodeCommand, processCpuMicros, runLoad, SERVER_CORE, stopChild } from './pinned.js';
import { aggregate } from './summary.js';

const SECONDS = Number(process.env.BENCH_MCP_SECONDS ?? 2);
const ROUNDS = Math.max(1, Number(process.env.BENCH_MCP_ROUNDS ?? 3));
// The JIT settles toolgate's larger hot path later than the floor's.
const WARMUP_SECONDS = Number(process.env.BENCH_MCP_WARMUP ?? 2);
const targetsScript = fileURLToPath(new URL('./mcp-targets.ts', import.meta.url));
const echo = JSON.stringify({ name: 'echo', arguments: { message: 'hello' } });
const weather = JSON.stringify({ name: 'get_weather', arguments: { city: 'Oslo' } });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_API_KEY}` };

export interface Server {
  url: string;
  child: ChildProcess;
  /** The stdio upstream(s) the server spawned, for CPU accounting. */
  upstreams: number[];
  /** toolgate: its /metrics says how many calls did not end ok. */
  isToolgate: boolean;
}

export async function start(name: 'floor' | 'floor-client' | 'floor-eras' | 'toolgate'): Promise<Server> {
  const [command, args] = nodeCommand(SERVER_CORE, targetsScript, [name]);
  const child = spawn(command, args, { cwd: packageRoot(), stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await firstLine(child, name, 60_000, (line) => (line.startsWith('LISTENING ') ? line.slice('LISTENING '.length) : undefined));
  return { url, child, upstreams: child.pid === undefined ? [] : descendantPids(child.pid), isToolgate: name === 'toolgate' };
}

interface Row {
  label: string;
  server: Server;
  body: string;
  runs: LoadSummary[];
  /** Per run: CPU per call in the server and in its upstream(s), µs. */
  cpu: Array<{ server: number; upstream: number }>;
  /** Per run (toolgate only): calls that failed, besides those cancelled by their client. */
  failed: number[];
}

function cpuNow(server: Server): { server: number; upstream: number } | undefined {
  const own = processCpuMicros(server.child.pid);
  if (own === undefined) return undefined;
  return { server: own, upstream: server.upstreams.reduce((sum, pid) => sum + (processCpuMicros(pid) ?? 0), 0) };
}

async function drive(row: Row, connections: number, durationSec: number): Promise<LoadSummary> {
  const failedBefore = row.server.isToolgate ? await failedCalls(row.server.url, BENCH_METRICS_TOKEN) : 0;
  const before = cpuNow(row.server);
  const result = await runLoad({ url: row.server.url, connections, durationSec, headers, body: row.body }, row.label);
  const after = cpuNow(row.server);
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${row.label}: ${result.errors} errors, ${result.non2xx} non-2xx responses`);
  if (row.server.isToolgate) {
    // A failed call (CIRCUIT_OPEN, UPSTREAM_ERROR, …) answers fast and says nothing about echo: the numbers would mean nothing.
    const failed = (await failedCalls(row.server.url, BENCH_METRICS_TOKEN)) - failedBefore;
    if (failed > 0) throw new Error(`${row.label}: ${failed} calls failed`);
    row.failed.push(failed);
  }
  if (before && after && result.requests > 0) {
    row.cpu.push({ server: (after.server - before.server) / result.requests, upstream: (after.upstream - before.upstream) / result.requests });
  }
  return result;
}

/** Mean CPU per call over the measured rounds, "server + upstream" in µs; a dash without /proc. */
function cpuCell(row: Row, rounds: number): string {
  const measured = row.cpu.slice(-rounds);
  if (measured.length === 0) return '—';
  const mean = (pick: (entry: { server: number; upstream: number }) => number): number => measured.reduce((sum, entry) => sum + pick(entry), 0) / measured.length;
  return `${fmt(mean((entry) => entry.server))} + ${fmt(mean((entry) => entry.upstream))}`;
}

const fmt = (value: number, digits = 0): string => value.toFixed(digits);

export async function bench(): Promise<string> {
  const lines: string[] = [];
  const started: Server[] = [];
  try {
    const [floor, client, gateway] = [await start('floor'), await start('floor-client'), await start('toolgate')];
    started.push(floor, client, gateway);
    for (const connections of [1, 16]) {
      const load = connections === 1 ? 'sequential (1 conn)' : `concurrent (${connections} conns)`;
      const rows: Row[] = [
        { label: 'floor: Fastify + 1 SDK client → echo', server: floor, body: echo, runs: [], cpu: [], failed: [] },
        { label: 'diagnostic: floor harness + toolgate upstream client → echo', server: client, body: echo, runs: [], cpu: [], failed: [] },
        { label: '**toolgate /v1/execute → echo**', server: gateway, body: echo, runs: [], cpu: [], failed: [] },
        { label: 'diagnostic: toolgate /v1/execute → function tool (core, no MCP)', server: gateway, body: weather, runs: [], cpu: [], failed: [] },
      ];
      // JIT in every process, connection pools; the servers stay up between loads, so once is enough.
      if (connections === 1) for (const row of rows) await drive(row, connections, WARMUP_SECONDS);
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const row of roundOrder(rows, round)) row.runs.push(await drive(row, connections, SECONDS));
      }
      const base = aggregate(rows[0]!.runs).rps;
      for (const row of rows) {
        const { rps, p50, p99 } = aggregate(row.runs);
        const ratio = fmt(rps / base, 2);
        const shown = row.label.startsWith('**') ? `**${ratio}**` : ratio;
        const failed = row.server.isToolgate ? String(row.failed.slice(-ROUNDS).reduce((sum, value) => sum + value, 0)) : '—';
        lines.push(`| ${load} | ${row.label} | ${fmt(rps)} | ${fmt(p50, 2)} | ${fmt(p99, 2)} | ${cpuCell(row, ROUNDS)} | ${failed} | ${shown} |`);
      }
    }
  } finally {
    await Promise.all(started.map((server) => stopChild(server.child)));
  }
  return [
    `### MCP: server-everything \`echo\` over stdio (${ROUNDS} round(s) × ${SECONDS} s per target, alternating, after ${WARMUP_SECONDS} s warm-up per target before the first load; loopback)`,
    '',
    hasTaskset
      ? 'Each server and the stdio upstream it spawns pinned to core 1, autocannon to core 0 (taskset); req/s is the mean over rounds, latency the median.'
      : 'taskset not found: processes are not pinned, numbers are noisier.',
    '',
    "The floor uses the SDK's stdio transport as it ships (one pipe write per message). toolgate's upstream client (toolgate and the " +
      'diagnostic row) sends the messages of one event-loop turn in one write (src/mcp/client/stdio-transport.ts), which saves the upstream ' +
      "most of its per-call wake-ups under concurrent load; toolgate against the diagnostic row is the gateway's own cost. " +
      "CPU per call is read from /proc for the server and its stdio upstream. Failed calls come from toolgate's own metrics (the calls " +
      'a run abandons when it ends count as cancelled, not failed); any failed call fails the bench.',
    '',
    '| load | target | req/s | p50 ms | p99 ms | CPU µs/call (server + upstream) | failed calls | ratio to floor |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...lines,
    '',
    'Latency percentiles come from every 2xx response time at microsecond precision (autocannon\'s own histogram keeps whole milliseconds).',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await bench());
}
