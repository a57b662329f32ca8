// Issue 45 in process: toolgate's CPU per /mcp tools/call → echo in each era, the same app serving both
// (app.inject, no sockets), so a loaded machine's neighbours count less than in req/s (bench/mcp-eras.ts). Each
// round runs both eras, the first alternating; a figure is process CPU (user + system) over the calls of one run,
// which includes toolgate's side of the stdio upstream but not the upstream process. Reported, never asserted.
// Env: BENCH_MCP_CPU_CALLS (per era and round, default 2000), BENCH_MCP_CPU_ROUNDS (default 6),
// BENCH_MCP_CPU_CONCURRENCY (calls in flight, default 16), BENCH_MCP_CPU_ONLY (`modern` or `legacy`: that era alone,
// for a profile: `node --cpu-prof --import tsx bench/mcp-eras-cpu.ts`).
import { BENCH_API_KEY } from './mcp-keys.js';
import { toolgate } from './mcp-targets.js';
import { median } from './summary.js';

const CALLS = Math.max(1, Number(process.env.BENCH_MCP_CPU_CALLS ?? 2000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_MCP_CPU_ROUNDS ?? 6));
const CONCURRENCY = Math.max(1, Number(process.env.BENCH_MCP_CPU_CONCURRENCY ?? 16));
const ONLY = process.env.BENCH_MCP_CPU_ONLY;

type Era = 'modern' | 'legacy';
const call = { name: 'echo', arguments: { message: 'hello' } };
const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const common = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${BENCH_API_KEY}` };
const requests: Record<Era, { headers: Record<string, string>; payload: string }> = {
  modern: {
    headers: { ...common, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: envelope } }),
  },
  legacy: {
    headers: { ...common, 'mcp-protocol-version': '2025-11-25' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
  },
};

const app = await toolgate();
await app.ready();

async function one(era: Era): Promise<void> {
  const response = await app.inject({ method: 'POST', url: '/mcp', ...requests[era] });
  if (response.statusCode !== 200 || !response.body.includes('Echo: hello') || response.body.includes('"isError":true')) {
    throw new Error(`${era} answered ${response.statusCode} ${response.body.slice(0, 300)}`);
  }
}

/** CPU µs per call over `calls` calls, `CONCURRENCY` in flight. */
async function run(era: Era, calls: number): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  const worker = async (): Promise<void> => {
    while (next < calls) {
      next += 1;
      await one(era);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

try {
  if (ONLY === 'modern' || ONLY === 'legacy') {
    const figures: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) figures.push(await run(ONLY, CALLS));
    process.stdout.write(`${ONLY} alone, CPU µs/call: median ${median(figures).toFixed(1)} (${figures.map((value) => value.toFixed(1)).join(', ')})\n`);
    process.exit(0);
  }
  for (const era of ['modern', 'legacy'] as const) await run(era, Math.min(CALLS, 500));
  const per: Record<Era, number[]> = { modern: [], legacy: [] };
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const order: Era[] = round % 2 === 0 ? ['modern', 'legacy'] : ['legacy', 'modern'];
    for (const era of order) per[era].push(await run(era, CALLS));
    ratios.push(per.modern[round]! / per.legacy[round]!);
  }
  const fmt = (values: number[]): string => values.map((value) => value.toFixed(1)).join(', ');
  process.stdout.write(
    [
      `node ${process.version}, ${ROUNDS} rounds × ${CALLS} calls per era, ${CONCURRENCY} in flight (app.inject)`,
      `modern CPU µs/call: median ${median(per.modern).toFixed(1)} (${fmt(per.modern)})`,
      `legacy CPU µs/call: median ${median(per.legacy).toFixed(1)} (${fmt(per.legacy)})`,
      `modern / legacy, median of per-round ratios: ${median(ratios).toFixed(3)} (${ratios.map((value) => value.toFixed(3)).join(', ')})`,
      '',
    ].join('\n'),
  );
} finally {
  await app.close();
}
