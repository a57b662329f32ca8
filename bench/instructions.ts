// Instructions per request of one bench server, counted by valgrind's callgrind: a measure that does not
// move with the machine's load (req/s and CPU time do), for paired before/after figures on a busy machine.
// The server runs under callgrind with instrumentation off; after a warm-up (the JIT tiers up by call counts,
// not by time) counting is switched on for a fixed number of requests, then the counts are dumped.
// All of the server's threads are counted (V8's compiler and GC threads included), not its stdio upstream.
// The split is by function name, and V8's collector also works inside other functions (write barriers,
// marking steps): a window with a full collection counts more everywhere, so compare several runs per side
// (bench/results.md records up to 20 % between runs of one build with 2,000 requests).
// BENCH_CACHE_SIM=1 adds callgrind's cache simulation (a 32 KiB, 8-way first-level data and instruction cache and a
// 512 KiB, 8-way last level: this machine's L1 and per-core L2, where a busy server's working sets compete) and
// reports the misses per request beside the instructions: a change that runs fewer instructions but touches more
// memory (or the reverse) shows there, still without the machine's load in the figure.
// Usage: [BENCH_CHECKOUT=<dir>] [BENCH_CACHE_SIM=1] npx tsx bench/instructions.ts <hot-path|hot-path-2k|guardrails|composition|bare|mcp|floor|mcp-modern|mcp-legacy|floor-modern|floor-legacy> [requests] [warm-up requests]
// (npm run build first: the toolgate targets run the compiled output).
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { packageRoot } from '../src/config/demo.js';
import { benchRequest } from './gateway/targets.js';
import { BENCH_API_KEY } from './mcp-keys.js';
import { firstLine, stopChild } from './pinned.js';

interface Spec {
  script: string;
  args: string[];
  env: Record<string, string>;
  mcp: boolean;
  /** A request of its own, sent to `path` instead of the listening /v1/execute URL (the /mcp eras). */
  request?: { path: string; headers: Record<string, string>; body: string };
}

// /mcp tools/call → echo in each era, as bench/mcp-eras.ts sends it.
const mcpCall = { name: 'echo', arguments: { message: 'hello' } };
const mcpEnvelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${BENCH_API_KEY}` };
const eraRequests = {
  modern: {
    path: '/mcp',
    headers: { ...mcpHeaders, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...mcpCall, _meta: mcpEnvelope } }),
  },
  legacy: { path: '/mcp', headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: mcpCall }) },
};
const eraTarget = (target: 'toolgate' | 'floor-eras', era: keyof typeof eraRequests): Spec => ({ script: join('bench', 'mcp-targets.ts'), args: [target], env: {}, mcp: true, request: eraRequests[era] });

const gateway = (script: string, env: Record<string, string> = {}): Spec => ({ script: join('bench', 'gateway', script), args: [], env, mcp: false });
const TARGETS: Record<string, Spec> = {
  'hot-path': gateway('toolgate-server.ts', { BENCH_CHAIN: 'hot-path' }),
  // Issue 50's pair: the hot path answering the 2 KiB result, without and with the guardrail rules (requests carry BENCH_TOOL=result_2k).
  'hot-path-2k': gateway('toolgate-server.ts', { BENCH_CHAIN: 'hot-path' }),
  guardrails: gateway('toolgate-server.ts', { BENCH_CHAIN: 'hot-path', BENCH_GUARDRAILS: 'on' }),
  full: gateway('toolgate-server.ts'),
  composition: gateway('composition-server.ts'),
  bare: gateway('bare-server.ts'),
  mcp: { script: join('bench', 'mcp-targets.ts'), args: ['toolgate'], env: {}, mcp: true },
  floor: { script: join('bench', 'mcp-targets.ts'), args: ['floor'], env: {}, mcp: true },
  'mcp-modern': eraTarget('toolgate', 'modern'),
  'mcp-legacy': eraTarget('toolgate', 'legacy'),
  'floor-modern': eraTarget('floor-eras', 'modern'),
  'floor-legacy': eraTarget('floor-eras', 'legacy'),
};

function listeningUrl(line: string): string | undefined {
  if (line.startsWith('LISTENING ')) return line.slice('LISTENING '.length);
  if (!line.startsWith('{')) return undefined;
  const { port } = JSON.parse(line) as { port?: number };
  return typeof port === 'number' ? `http://127.0.0.1:${port}/v1/execute` : undefined;
}

async function load(url: string, amount: number, headers: Record<string, string>, body: string): Promise<number> {
  const result = await autocannon({ url, method: 'POST', connections: 8, amount, headers, body, timeout: 60 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.total;
}

/** The mutator's misses per request in the simulated caches (BENCH_CACHE_SIM=1): first level (instructions, data reads, data writes) and last level. */
export interface CacheMisses {
  l1i: number;
  l1dRead: number;
  l1dWrite: number;
  /** Misses of the simulated last level (512 KiB: an L2), instructions and data. */
  last: number;
}

export interface InstructionCounts {
  /** Everything the server's threads ran. */
  total: number;
  /** V8 compiling (parser, bytecode, Maglev, TurboFan): falls as the warm-up grows; not the request path's own cost. */
  compiler: number;
  /** V8's garbage collector: what the requests' allocations cost, moved by heap state more than the rest. */
  gc: number;
  /** The rest: the request path as it runs (JavaScript, builtins, Node and libuv), the steadiest paired figure. */
  mutator: number;
  /** With BENCH_CACHE_SIM=1 only. */
  misses?: CacheMisses;
}

const COMPILER = /v8::internal::(compiler|maglev|turboshaft|baseline|interpreter::BytecodeGenerator|Parser|Scanner|Compiler)\b|compiler::/;
const GC = /Marking|Scavenge|Sweep|MarkCompact|Heap::|heap::|Evacuat|GCTracer|RememberedSet|SlotSet|Compactor/;

/** A callgrind dump's instructions, split by callgrind_annotate's per-function counts. */
function countsOf(file: string): InstructionCounts {
  const annotated = spawnSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (annotated.status !== 0) throw new Error(`callgrind_annotate: ${annotated.stderr}`);
  const counts: InstructionCounts = { total: 0, compiler: 0, gc: 0, mutator: 0 };
  // With the cache simulation every line lists each event (Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw), each count
  // followed by its share in parentheses (or a `.` for none): the mutator's misses are summed like its instructions.
  const events = /^Events shown:\s+(.*)$/m.exec(annotated.stdout)?.[1]?.trim().split(/\s+/) ?? ['Ir'];
  const simulated = events.includes('D1mr');
  const misses: CacheMisses = { l1i: 0, l1dRead: 0, l1dWrite: 0, last: 0 };
  for (const line of annotated.stdout.split('\n')) {
    const match = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/.exec(line);
    if (!match || match[2]!.includes('PROGRAM TOTALS')) continue;
    const count = Number(match[1]!.replaceAll(',', ''));
    counts.total += count;
    if (COMPILER.test(match[2]!)) counts.compiler += count;
    else if (GC.test(match[2]!)) counts.gc += count;
    else {
      counts.mutator += count;
      if (simulated) {
        const values = line.replace(/\([ \d.]+%\)/g, ' ').trim().split(/\s+/).slice(0, events.length).map((value) => (value === '.' ? 0 : Number(value.replaceAll(',', ''))));
        const of = (name: string): number => values[events.indexOf(name)] ?? 0;
        misses.l1i += of('I1mr');
        misses.l1dRead += of('D1mr');
        misses.l1dWrite += of('D1mw');
        misses.last += of('ILmr') + of('DLmr') + of('DLmw');
      }
    }
  }
  if (simulated) counts.misses = misses;
  return counts;
}

// The checkout whose servers are counted (BENCH_CHECKOUT, default this one; build it first): a paired figure
// counts a copy of the commit before a change against this one.
const checkout = resolve(process.env.BENCH_CHECKOUT ?? packageRoot());

// V8 compiles and collects garbage on the main thread: the counts then depend less on thread timing.
// BENCH_SERVER_FLAGS adds node flags (e.g. `--perf-basic-prof`: /tmp/perf-<pid>.map names the JIT code callgrind shows as addresses).
const v8Flags = ['--single-threaded', ...(process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean)];

export async function countInstructions(name: string, requests: number, warmup: number): Promise<InstructionCounts> {
  const spec = TARGETS[name];
  if (!spec) throw new Error(`unknown target ${name} (one of ${Object.keys(TARGETS).join(', ')})`);
  const out = join(tmpdir(), `toolgate-callgrind-${process.pid}-${name}.out`);
  const cacheSim = process.env.BENCH_CACHE_SIM === '1' ? ['--cache-sim=yes', '--I1=32768,8,64', '--D1=32768,8,64', '--LL=524288,8,64'] : [];
  const args = ['--tool=callgrind', ...cacheSim, '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, ...v8Flags, '--import', 'tsx', resolve(checkout, spec.script), ...spec.args];
  const child = spawn('valgrind', args, { cwd: checkout, env: { ...process.env, ...spec.env }, stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    // Generous: under valgrind on a busy machine a start-up takes minutes.
    const listening = await firstLine(child, name, 1_500_000, listeningUrl);
    const url = spec.request ? new URL(spec.request.path, listening).href : listening;
    const request = spec.request
      ? spec.request
      : spec.mcp
      ? { headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_API_KEY}` }, body: JSON.stringify({ name: 'echo', arguments: { message: 'hello' } }) }
      : await benchRequest();
    await load(url, warmup, request.headers, request.body);
    const control = (flag: string): void => {
      const result = spawnSync('callgrind_control', [flag, String(child.pid)], { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`callgrind_control ${flag}: ${result.stderr}`);
    };
    control('--instr=on');
    control('--zero');
    const done = await load(url, requests, request.headers, request.body);
    control('--dump');
    control('--instr=off');
    // The dump is written to `<out>.<n>`; the first one after start is .1.
    const counts = countsOf(`${out}.1`);
    const perRequest = (misses: CacheMisses): CacheMisses => ({ l1i: misses.l1i / done, l1dRead: misses.l1dRead / done, l1dWrite: misses.l1dWrite / done, last: misses.last / done });
    return { total: counts.total / done, compiler: counts.compiler / done, gc: counts.gc / done, mutator: counts.mutator / done, ...(counts.misses ? { misses: perRequest(counts.misses) } : {}) };
  } finally {
    await stopChild(child);
    if (process.env.KEEP_CALLGRIND === undefined) for (const suffix of ['', '.1', '.2']) rmSync(`${out}${suffix}`, { force: true });
    else process.stderr.write(`callgrind output kept: ${out}.1\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [name = 'hot-path', requests = '3000', warmup = '3000'] = process.argv.slice(2);
  if (name === 'guardrails' || name === 'hot-path-2k') process.env.BENCH_TOOL ??= 'result_2k';
  const counts = await countInstructions(name, Number(requests), Number(warmup));
  const round = (value: number): string => String(Math.round(value));
  process.stdout.write(
    `${name}: instructions/request over ${requests} requests after ${warmup} warm-up: mutator ${round(counts.mutator)}, ` +
      `GC ${round(counts.gc)}, compiler ${round(counts.compiler)}, total ${round(counts.total)}` +
      (counts.misses
        ? `; misses/request L1i ${round(counts.misses.l1i)}, L1d read ${round(counts.misses.l1dRead)}, L1d write ${round(counts.misses.l1dWrite)}, last level (512 KiB) ${round(counts.misses.last)}`
        : '') +
      '\n',
  );
}
