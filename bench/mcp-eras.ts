// The MCP section's two eras (issue 45): server-everything `echo` over stdio called through toolgate's /mcp with
// a 2026-07-28 request (stateless, the `_meta` envelope and Mcp-* headers) and with a 2025-era stateless POST,
// each against the floor of the same era — Fastify + the SDK v2 serving entry forwarding to one SDK v2 client
// (bench/mcp-targets.ts `floor-eras`). Both servers run once, pinned to core 1 with their upstreams; every round
// drives the four rows in a rotating order, and each era's figure is the median over rounds of toolgate's req/s
// over its floor's in the same round. Loopback only, bounded (≈ 1 min with the defaults).
// Env: BENCH_MCP_ERAS_SECONDS (per run, default 2), BENCH_MCP_ERAS_ROUNDS (default 6), BENCH_MCP_ERAS_CONNECTIONS (16).
import { pathToFileURL } from 'node:url';
import { roundOrder } from './gateway/targets.js';
import { BENCH_API_KEY } from './mcp-keys.js';
import { start, type Server } from './mcp.js';
import { hasTaskset, processCpuMicros, runLoad, stopChild } from './pinned.js';
import { aggregate, roundRatios, type MeasuredRun } from './summary.js';

const SECONDS = Number(process.env.BENCH_MCP_ERAS_SECONDS ?? 2);
const ROUNDS = Math.max(1, Number(process.env.BENCH_MCP_ERAS_ROUNDS ?? 6));
const CONNECTIONS = Math.max(1, Number(process.env.BENCH_MCP_ERAS_CONNECTIONS ?? 16));
const WARMUP_SECONDS = 2;

type Era = 'modern' | 'legacy';
const call = { name: 'echo', arguments: { message: 'hello' } };
const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const requests: Record<Era, { headers: Record<string, string>; body: string }> = {
  modern: {
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: envelope } }),
  },
  legacy: {
    headers: { 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
  },
};
const common = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${BENCH_API_KEY}` };

interface Row {
  label: string;
  era: Era;
  server: Server;
  url: string;
  runs: MeasuredRun[];
}

const mcpUrl = (server: Server): string => server.url.replace(/\/v1\/execute$/, '/mcp');

/** One request before any load: it must answer 200 with echo's text (not an error), or the numbers mean nothing. */
async function check(row: Row): Promise<void> {
  const { headers, body } = requests[row.era];
  const response = await fetch(row.url, { method: 'POST', headers: { ...common, ...headers }, body });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('Echo: hello') || text.includes('"isError":true')) throw new Error(`${row.label} answered ${response.status} ${text.slice(0, 300)}`);
}

async function drive(row: Row, durationSec: number): Promise<MeasuredRun> {
  const { headers, body } = requests[row.era];
  const before = processCpuMicros(row.server.child.pid);
  const run: MeasuredRun = await runLoad({ url: row.url, connections: CONNECTIONS, durationSec, headers: { ...common, ...headers }, body }, row.label);
  if (run.errors > 0 || run.non2xx > 0) throw new Error(`${row.label}: ${run.errors} errors, ${run.non2xx} non-2xx responses`);
  // The server's own CPU per request (not its upstream's): steadier than req/s while neighbours take the core.
  const after = processCpuMicros(row.server.child.pid);
  if (before !== undefined && after !== undefined && run.requests > 0) run.serverCpuMicrosPerRequest = (after - before) / run.requests;
  return run;
}

const fmt = (value: number, digits = 0): string => value.toFixed(digits);

export async function bench(): Promise<string> {
  const started: Server[] = [];
  const lines: string[] = [];
  try {
    const [floor, gateway] = [await start('floor-eras'), await start('toolgate')];
    started.push(floor, gateway);
    const rows: Row[] = [
      { label: 'floor: Fastify + SDK v2 entry → echo, 2026-07-28', era: 'modern', server: floor, url: mcpUrl(floor), runs: [] },
      { label: '**toolgate /mcp → echo, 2026-07-28**', era: 'modern', server: gateway, url: mcpUrl(gateway), runs: [] },
      { label: 'floor: Fastify + SDK v2 entry → echo, 2025-11-25 (stateless)', era: 'legacy', server: floor, url: mcpUrl(floor), runs: [] },
      { label: '**toolgate /mcp → echo, 2025-11-25 (stateless)**', era: 'legacy', server: gateway, url: mcpUrl(gateway), runs: [] },
    ];
    for (const row of rows) await check(row);
    for (const row of rows) await drive(row, WARMUP_SECONDS);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const row of roundOrder(rows, round)) row.runs.push(await drive(row, SECONDS));
    }
    for (const era of ['modern', 'legacy'] as const) {
      const [floorRow, toolgateRow] = rows.filter((row) => row.era === era) as [Row, Row];
      const ratios = roundRatios(toolgateRow.runs, floorRow.runs);
      for (const row of [floorRow, toolgateRow]) {
        const { rps, p50, p99, cpuMicros } = aggregate(row.runs);
        const ratio = row === floorRow ? '1.00' : `**${fmt(ratios.median, 2)}** (${fmt(ratios.min, 2)}–${fmt(ratios.max, 2)})`;
        lines.push(`| ${era} | ${row.label} | ${fmt(rps)} | ${fmt(p50, 2)} | ${fmt(p99, 2)} | ${ratio} | ${cpuMicros === undefined ? '–' : fmt(cpuMicros)} |`);
      }
    }
  } finally {
    await Promise.all(started.map((server) => stopChild(server.child)));
  }
  return [
    `### MCP, both eras: server-everything \`echo\` over stdio through /mcp (${ROUNDS} rounds × ${SECONDS} s per row, ${CONNECTIONS} connections, rotating order; loopback)`,
    '',
    hasTaskset ? 'Each server and the stdio upstream it spawns pinned to core 1, autocannon to core 0 (taskset).' : 'taskset not found: processes are not pinned, numbers are noisier.',
    '',
    "The floor of each era is Fastify + the SDK v2 serving entry (`createMcpHandler`, `legacy: 'stateless'`) forwarding tools/call to one SDK v2 " +
      "stdio client; toolgate's upstream client batches the stdio writes of one event-loop turn, the floor's does not. The ratio is the median " +
      "over rounds of toolgate's req/s over its era's floor in the same round (min–max in brackets); req/s is the mean over rounds; server CPU " +
      'is the server process alone (not its upstream) per request, the mean over rounds.',
    '',
    '| era | target | req/s | p50 ms | p99 ms | ratio to floor (median of rounds) | server CPU µs/req |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...lines,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await bench());
}
