// Issue 4 bench: server-everything `echo` over stdio, through toolgate's /v1/execute versus the floor —
// a minimal Fastify route holding one SDK client. Each server runs in its own process; autocannon
// runs here. Loopback only, bounded (≈ 45 s).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { BENCH_API_KEY } from './mcp-targets.js';

type LoadResult = Awaited<ReturnType<typeof autocannon>>;

const SECONDS = 4;
const WARMUP_SECONDS = 2;
const targets = fileURLToPath(new URL('./mcp-targets.ts', import.meta.url));
const echo = JSON.stringify({ name: 'echo', arguments: { message: 'hello' } });
const weather = JSON.stringify({ name: 'get_weather', arguments: { city: 'Oslo' } });

interface Target {
  url: string;
  close: () => Promise<void>;
}

async function start(name: 'floor' | 'floor-client' | 'toolgate'): Promise<Target> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', targets, name], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 20 s`)), 20_000);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('LISTENING ')) return;
      clearTimeout(timer);
      resolve(line.slice('LISTENING '.length));
    });
  });
  return {
    url,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function measure(target: Target, body: string, connections: number): Promise<LoadResult> {
  const options = { url: target.url, method: 'POST' as const, headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_API_KEY}` }, body, connections };
  await autocannon({ ...options, duration: WARMUP_SECONDS }); // warm-up: JIT in both processes, connection pools
  const result = await autocannon({ ...options, duration: SECONDS });
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${target.url}: ${result.errors} errors, ${result.non2xx} non-2xx responses`);
  return result;
}

const fmt = (value: number, digits = 0): string => value.toFixed(digits);
const row = (load: string, target: string, result: LoadResult, ratio: string): string =>
  `| ${load} | ${target} | ${fmt(result.requests.average)} | ${fmt(result.latency.p50)} | ${fmt(result.latency.p99)} | ${ratio} |`;

export async function bench(): Promise<string> {
  const rows: string[] = [];
  const started: Target[] = [];
  try {
    const [floor, client, gateway] = [await start('floor'), await start('floor-client'), await start('toolgate')];
    started.push(floor, client, gateway);
    for (const connections of [1, 16]) {
      const label = connections === 1 ? 'sequential (1 conn)' : `concurrent (${connections} conns)`;
      const base = await measure(floor, echo, connections);
      const ours = await measure(client, echo, connections);
      const gated = await measure(gateway, echo, connections);
      const core = await measure(gateway, weather, connections);
      const ratio = (result: LoadResult): string => fmt(result.requests.average / base.requests.average, 2);
      rows.push(row(label, 'floor: Fastify + 1 SDK client → echo', base, '1.00'));
      rows.push(row(label, 'diagnostic: floor harness + toolgate upstream client → echo', ours, ratio(ours)));
      rows.push(row(label, '**toolgate /v1/execute → echo**', gated, `**${ratio(gated)}**`));
      rows.push(row(label, 'diagnostic: toolgate /v1/execute → function tool (core, no MCP)', core, ratio(core)));
    }
  } finally {
    await Promise.all(started.map((target) => target.close()));
  }
  return [
    `### MCP: server-everything \`echo\` over stdio (${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, loopback)`,
    '',
    '| load | target | req/s | p50 ms | p99 ms | ratio to floor |',
    '|---|---|---:|---:|---:|---:|',
    ...rows,
    '',
    'autocannon reports latency in whole milliseconds; at these rates the sequential p50 rounds to 0.',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await bench());
}
