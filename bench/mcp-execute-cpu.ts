// Issues 44/45 in process: toolgate's own CPU per POST /v1/execute → server-everything `echo` over stdio, paired
// between two built checkouts (`npx tsx bench/mcp-execute-cpu.ts <checkout A> <checkout B>`). Each checkout's
// compiled server runs in its own child process and is driven there by app.inject (no sockets, no load generator),
// so a figure is that process's CPU (user + system, process.cpuUsage) over one batch of calls: toolgate's side of
// the stdio upstream included, the upstream process not. Beside it, the JavaScript heap allocated per call (the
// heap's growth over the batch plus what each collection in it freed, v8.GCProfiler): what the collector's share
// of the CPU follows, and much steadier than CPU time on a loaded machine. Batches alternate A/B, B/A per round; the result is the
// median of rounds and of per-round B / A. CPU time moves less with a loaded machine's neighbours than req/s.
// Env: BENCH_MCP_CPU_CALLS (per batch, default 3000), BENCH_MCP_CPU_ROUNDS (default 8), BENCH_MCP_CPU_CONCURRENCY
// (default 16), BENCH_MCP_CPU_PROFILE=<dir> (each child writes a V8 CPU profile and a sampling heap profile of its
// measured batches there; BENCH_MCP_CPU_PROFILE_INTERVAL its sampling interval in µs, default 1000).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { BENCH_API_KEY, BENCH_METRICS_TOKEN } from './mcp-keys.js';
import { median } from './summary.js';

const CALLS = Math.max(1, Number(process.env.BENCH_MCP_CPU_CALLS ?? 3000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_MCP_CPU_ROUNDS ?? 8));
const CONCURRENCY = Math.max(1, Number(process.env.BENCH_MCP_CPU_CONCURRENCY ?? 16));
const PROFILE = process.env.BENCH_MCP_CPU_PROFILE;
/** The CPU profile's sampling interval in µs (V8's default is 1000: too few samples for one call's parts). */
const PROFILE_INTERVAL_US = Math.max(10, Number(process.env.BENCH_MCP_CPU_PROFILE_INTERVAL ?? 1000));

interface Injectable {
  ready(): Promise<unknown>;
  close(): Promise<unknown>;
  inject(request: { method: 'POST'; url: string; headers: Record<string, string>; payload: string }): Promise<{ statusCode: number; body: string }>;
}

/** The checkout's own compiled server with the MCP bench's config (bench/mcp-targets.ts at either commit). */
async function serverOf(checkout: string): Promise<Injectable> {
  const { buildServer } = (await import(pathToFileURL(join(checkout, 'dist/src/app.js')).href)) as { buildServer: (config: unknown, options: unknown) => Promise<Injectable> };
  const { validateConfigObject } = (await import(pathToFileURL(join(checkout, 'dist/src/config/load.js')).href)) as { validateConfigObject: (raw: unknown, root: string, env: undefined) => unknown };
  const config = validateConfigObject(
    {
      auth: { apiKeys: [{ id: 'bench', sha256: createHash('sha256').update(BENCH_API_KEY).digest('hex'), tenant: 'bench', user: 'bench', roles: [] }] },
      audit: { sink: 'off' },
      logging: { level: 'silent' },
      functions: [{ module: './test/fixtures/functions/basic.mjs' }],
      mcp: { global: [{ id: 'everything', transport: 'stdio', command: join(checkout, 'node_modules/.bin/mcp-server-everything'), args: ['stdio'], required: true }] },
      tenants: { bench: { mcpServices: ['everything'], limits: { maxInFlight: 1024 } } },
      metrics: { enabled: false, token: BENCH_METRICS_TOKEN },
    },
    checkout,
    undefined,
  );
  return buildServer(config, { logger: false, defaultMetrics: false });
}

/** The child: builds the server, then answers each `run <calls>` line with CPU µs per call. */
async function child(checkout: string, label: string): Promise<void> {
  const app = await serverOf(checkout);
  await app.ready();
  const request = { method: 'POST' as const, url: '/v1/execute', headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_API_KEY}` }, payload: JSON.stringify({ name: 'echo', arguments: { message: 'hello' } }) };
  const run = async (calls: number): Promise<Batch> => {
    let next = 0;
    const gcs = new GCProfiler();
    gcs.start();
    const heapBefore = getHeapStatistics().used_heap_size;
    const before = process.cpuUsage();
    const worker = async (): Promise<void> => {
      while (next < calls) {
        next += 1;
        const response = await app.inject(request);
        if (response.statusCode !== 200 || !response.body.includes('Echo: hello')) throw new Error(`answered ${response.statusCode} ${response.body.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const used = process.cpuUsage(before);
    const heapAfter = getHeapStatistics().used_heap_size;
    const freed = (gcs.stop()?.statistics ?? []).reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
    return { cpuMicros: (used.user + used.system) / calls, allocatedBytes: (heapAfter - heapBefore + freed) / calls };
  };
  await run(CALLS); // warm-up, not reported
  const session = PROFILE === undefined ? undefined : new Session();
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US });
    await session.post('Profiler.start');
    // Every allocation sampled, also those collected since: where the bytes per call come from.
    await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('READY\n');
  for await (const line of lines) {
    if (line.startsWith('run ')) process.stdout.write(`${JSON.stringify(await run(Number(line.slice(4))))}\n`);
    else break;
  }
  if (session && PROFILE !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    const { profile: heap } = await session.post('HeapProfiler.stopSampling');
    mkdirSync(PROFILE, { recursive: true });
    writeFileSync(join(PROFILE, `${label}.cpuprofile`), JSON.stringify(profile));
    writeFileSync(join(PROFILE, `${label}.heapprofile`), JSON.stringify(heap));
  }
  await app.close();
  process.exit(0);
}

interface Batch {
  cpuMicros: number;
  allocatedBytes: number;
}

interface Driven {
  process: ChildProcess;
  lines: AsyncIterator<string>;
  input: Interface;
}

async function nextLine(driven: Driven): Promise<string> {
  const { value, done } = await driven.lines.next();
  if (done === true) throw new Error('the child exited');
  return value as string;
}

async function start(checkout: string, label: string): Promise<Driven> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, 'child', checkout, label], { stdio: ['pipe', 'pipe', 'inherit'] });
  const input = createInterface({ input: child.stdout! });
  const driven = { process: child, lines: input[Symbol.asyncIterator](), input };
  const first = await nextLine(driven);
  if (first !== 'READY') throw new Error(`${label}: ${first}`);
  return driven;
}

async function batch(driven: Driven): Promise<Batch> {
  driven.process.stdin!.write(`run ${CALLS}\n`);
  return JSON.parse(await nextLine(driven)) as Batch;
}

async function main(): Promise<void> {
  if (process.argv[2] === 'child') return child(resolve(process.argv[3]!), process.argv[4]!);
  const [a, b] = [resolve(process.argv[2] ?? '.'), resolve(process.argv[3] ?? '.')];
  const sides = [await start(a, 'A'), await start(b, 'B')] as const;
  const per: [Batch[], Batch[]] = [[], []];
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const side of order) per[side as 0 | 1].push(await batch(sides[side as 0 | 1]));
    }
  } finally {
    for (const side of sides) {
      side.process.stdin!.end('stop\n');
      await new Promise((done) => side.process.once('exit', done));
    }
  }
  const lines = [`node ${process.version}, ${ROUNDS} rounds × ${CALLS} calls a side, ${CONCURRENCY} in flight (app.inject → echo over stdio)`];
  for (const [what, pick, digits] of [['CPU µs/call', (batch: Batch) => batch.cpuMicros, 1], ['heap bytes allocated/call', (batch: Batch) => batch.allocatedBytes, 0]] as const) {
    const [sideA, sideB] = [per[0].map(pick), per[1].map(pick)];
    const ratios = sideB.map((value, round) => value / sideA[round]!);
    const fmt = (values: number[], places: number = digits): string => values.map((value) => value.toFixed(places)).join(', ');
    lines.push(
      `${what}: A ${median(sideA).toFixed(digits)} (${fmt(sideA)})`,
      `${what}: B ${median(sideB).toFixed(digits)} (${fmt(sideB)})`,
      `${what}: B / A, median of per-round ratios ${median(ratios).toFixed(3)} (${fmt(ratios, 3)})`,
    );
  }
  process.stdout.write(`A ${a}\nB ${b}\n${lines.join('\n')}\n`);
}

await main();
