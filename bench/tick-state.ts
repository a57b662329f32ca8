// Which hot-path server processes are in process.nextTick's "slow state" (bench/results.md, hot5 and hot6), and what
// `{}`'s map transition table holds then. Each run a fresh server (BENCH_CHAIN=hot-path) with bench/tick-state-probe.mjs
// preloaded, sampled at start, after the warm-up and after the measured load; checkouts alternate run by run. Per run:
// the samples (do two tick objects share a map, ns per nextTick in a tight loop, `{}`'s transition count), server CPU
// per request over the measured window (/proc, the server pinned to its core), and the first keys of `{}`'s transitions
// grouped by a name pattern. Usage: npx tsx bench/tick-state.ts <runs per checkout> <requests> <warm-up> <checkout>...
// (each checkout built). Run it under Node 24 (the machine's node is 20). BENCH_CONNECTIONS (default 32).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadRequests } from './gc-per-request.js';
import { benchRequest } from './gateway/targets.js';
import { pinProcess, processCpuMicros, SERVER_CORE, stopChild } from './pinned.js';

export interface TickSample {
  sample: number;
  sameMap: boolean;
  fast: boolean;
  nsPerTick: number;
  /** %GetOptimizationStatus(process.nextTick): a bit field (V8's OptimizationStatus; 16 = TurboFan-optimized). */
  nextTickStatus: number;
  /** Transitions in `{}`'s map's table when sampled. */
  transitions: number;
  /** Whether the tick literal's first key (async_id_symbol) is one of them. */
  hasTickKey: boolean;
  /** IC states of nextTick's DefineKeyedOwnPropertyInLiteral slots (the tick literal's computed keys), in slot order. */
  literalIcs: string[];
  /** The table's first keys, grouped (`__fjs_root_*`, `Symbol(...)`, or the key itself). */
  keys: Map<string, number>;
}

/** Groups a first key: fast-json-stringify's numbered root ids and other numbered names count as one. */
export function keyGroup(key: string): string {
  return key.replace(/\d+/g, 'N');
}

/** The probe's samples in a server's stdout (bench/tick-state-probe.mjs). */
export function parseSamples(text: string): TickSample[] {
  const samples: TickSample[] = [];
  for (const block of text.split('TICKPROBE ').slice(1)) {
    const head = /^(\{.*?\})/.exec(block);
    if (!head) continue;
    const body = block.split('TICKPROBE-END')[0]!;
    const count = /- transitions #(\d+)/.exec(body);
    const keys = new Map<string, number>();
    let hasTickKey = false;
    for (const match of body.matchAll(/^\s+0x[0-9a-f]+(?:: \[String\](?: in \w+)?: #(.*?)|( <Symbol: .*?>)): \(transition to/gm)) {
      const key = match[1] ?? match[2]!.trim();
      if (key.includes('async_id_symbol')) hasTickKey = true;
      const group = keyGroup(key);
      keys.set(group, (keys.get(group) ?? 0) + 1);
    }
    const literalIcs = Array.from(body.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g), (match) => match[1]!.slice(0, 4));
    samples.push({ ...(JSON.parse(head[1]!) as Pick<TickSample, 'sample' | 'sameMap' | 'fast' | 'nsPerTick' | 'nextTickStatus'>), transitions: count ? Number(count[1]) : 0, hasTickKey, literalIcs, keys });
  }
  return samples;
}

interface Run {
  checkout: string;
  samples: TickSample[];
  cpuMicrosPerRequest: number;
}

const pause = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** The port the server prints as a JSON line into its output file; bounded to 120 s. */
async function portFrom(path: string, child: ChildProcess): Promise<number> {
  for (let waited = 0; waited < 120_000; waited += 100) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited (${String(child.exitCode)}) before listening`);
    const line = /^\{"port":(\d+)\}$/m.exec(readFileSync(path, 'utf8'));
    if (line) return Number(line[1]);
    await pause(100);
  }
  throw new Error('server did not report its port in 120 s');
}

async function run(checkout: string, requests: number, warmup: number, connections: number): Promise<Run> {
  const probe = fileURLToPath(new URL('tick-state-probe.mjs', import.meta.url));
  const args = ['--allow-natives-syntax', '--import', probe, '--import', 'tsx', resolve(checkout, 'bench/gateway/toolgate-server.ts')];
  // V8's stdout stream into a file (into a pipe its pieces interleave): read once the server has exited and flushed it.
  const outPath = join(tmpdir(), `tick-state-${process.pid}-${Date.now()}.out`);
  const out = openSync(outPath, 'w');
  const child = spawn(process.execPath, args, { cwd: checkout, env: { ...process.env, BENCH_CHAIN: 'hot-path' }, stdio: ['pipe', out, 'inherit'] });
  closeSync(out);
  try {
    const port = await portFrom(outPath, child);
    pinProcess(child.pid, SERVER_CORE);
    const { headers, body } = await benchRequest();
    const url = `http://127.0.0.1:${port}/v1/execute`;
    const load = (amount: number): Promise<number> => loadRequests(checkout, { url, connections, amount, headers, body });
    child.kill('SIGUSR2');
    await pause(300);
    await load(warmup);
    child.kill('SIGUSR2');
    await pause(300);
    const before = processCpuMicros(child.pid) ?? 0;
    const done = await load(requests);
    const cpu = (processCpuMicros(child.pid) ?? 0) - before;
    child.kill('SIGUSR2');
    await pause(300);
    await stopChild(child);
    return { checkout, samples: parseSamples(readFileSync(outPath, 'utf8')), cpuMicrosPerRequest: cpu / done };
  } finally {
    await stopChild(child);
    if (!process.env.TICK_STATE_KEEP) rmSync(outPath, { force: true });
  }
}

function describe(result: Run): string {
  const samples = result.samples.map((s) => `#${s.sample} sameMap=${String(s.sameMap)} ${s.nsPerTick} ns/tick status=${s.nextTickStatus} {}:${s.transitions}${s.hasTickKey ? '+tick' : ''} ics=${s.literalIcs.join('/')}`);
  return `${result.checkout}: ${result.cpuMicrosPerRequest.toFixed(1)} µs/request | ${samples.join(' | ')}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [runs = '1', requests = '30000', warmup = '8000', ...checkouts] = process.argv.slice(2);
  if (checkouts.length === 0) throw new Error('usage: npx tsx bench/tick-state.ts <runs per checkout> <requests> <warm-up> <checkout>...');
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  for (let round = 0; round < Number(runs); round += 1) {
    // Alternating which checkout goes first, so a drift of the machine falls on all.
    const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const checkout of order) {
      const result = await run(resolve(checkout), Number(requests), Number(warmup), connections);
      process.stdout.write(`${describe(result)}\n`);
      const last = result.samples.at(-1);
      if (last && process.env.TICK_STATE_KEYS) {
        const top = [...last.keys].sort((x, y) => y[1] - x[1]).slice(0, 25);
        process.stdout.write(`  keys: ${top.map(([key, n]) => `${key}×${n}`).join(', ')}\n`);
      }
    }
  }
}
