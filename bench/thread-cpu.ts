// Where a hot-path server's CPU goes, thread by thread: bench:ab counts the whole process (every thread),
// `--cpu-prof` samples the main thread only, so work V8 does on its own threads (scavenger and marking
// helpers, concurrent marking and sweeping, optimizing compile jobs) shows in the first and never in the
// second. Each run starts a server pinned to the server core (as bench:ab pins it), warms it up, then reads
// every thread's run time (/proc/<pid>/task/<tid>/schedstat, ns) around a fixed number of requests, with V8's
// --trace-gc-nvp lines of the same window (bench/gc-marker.mjs marks it). Sides alternate run by run.
// Usage: npx tsx bench/thread-cpu.ts <checkout A> <checkout B> [runs per side, 3] [requests, 30000] [warm-up, 10000]
// Env: BENCH_AB_CHAIN=guardrails (A guardrails off, B on, both answering result_2k; use `. .`), otherwise each
// side with this process's BENCH_* env (BENCH_GUARDRAILS, BENCH_TOOL); BENCH_SERVER_FLAGS (extra node flags for
// both servers, e.g. `--trace-opt --trace-deopt`: their lines in the window are counted), BENCH_CONNECTIONS (32),
// BENCH_PERF=<dir> (a `perf record` of the window per run, <dir>/<side>-<run>.data; read with `perf report -i`),
// BENCH_WINDOW_DIR=<dir> (the server's stdout over the window, <dir>/<side>-<run>.txt).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gcWindow, markedWindow, type GcWindow } from './gc-per-request.js';
import { hasTaskset, LOAD_CORE, pinProcess } from './pinned.js';
import { median } from './summary.js';

/** Run time (ns) of every thread of a process so far, by thread id, with the thread's name. */
function threadTimes(pid: number): Map<number, { name: string; ns: number }> {
  const times = new Map<number, { name: string; ns: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      times.set(Number(tid), { name: Number(tid) === pid ? 'main' : name, ns });
    } catch {
      // the thread ended while we looked
    }
  }
  return times;
}

/** µs per request by thread name (threads of one name summed), between two readings. */
function perRequest(before: Map<number, { name: string; ns: number }>, after: Map<number, { name: string; ns: number }>, requests: number): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const [tid, { name, ns }] of after) byName[name] = (byName[name] ?? 0) + (ns - (before.get(tid)?.ns ?? 0)) / 1000 / requests;
  return byName;
}

/** Lines of extra traces in the window: optimizations, deoptimizations (--trace-opt, --trace-deopt). */
const TRACES: Record<string, RegExp> = {
  optimized: /^\[completed optimizing/gm,
  deopts: /^\[bailout \(kind: /gm,
  markedForOpt: /^\[marking /gm,
};

export interface ThreadWindow {
  requests: number;
  cpu: Record<string, number>;
  gc: GcWindow;
  traces: Record<string, number>;
}

async function measure(checkout: string, env: Record<string, string>, label: string, requests: number, warmup: number, connections: number): Promise<ThreadWindow> {
  const perfDir = process.env.BENCH_PERF;
  const jitdump = process.env.BENCH_PERF_JITDUMP === '1';
  // With BENCH_PERF=<dir>: `perf record` of every thread over the window (cpu-clock samples; V8's symbols from
  // --perf-basic-prof, or its code for `perf annotate` from --perf-prof with BENCH_PERF_JITDUMP=1, after `perf inject --jit`).
  const perfFlags = perfDir === undefined ? [] : jitdump ? ['--perf-prof', `--perf-prof-path=${perfDir}`] : ['--perf-basic-prof'];
  const flags = [...perfFlags, ...(process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean)];
  const pause = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
  const { value, window } = await markedWindow(checkout, { warmup, connections, env, flags, pin: true }, async ({ pid, load }) => {
    const perfArgs = ['record', '-q', ...(process.env.BENCH_PERF_GRAPH === '1' ? ['-g'] : []), ...(jitdump ? ['-k', '1'] : []), '-e', 'cpu-clock', '-F', '2999', '-p', String(pid)];
    const perf = perfDir === undefined ? undefined : spawn('perf', [...perfArgs, '-o', resolve(perfDir, `${label}.data`)], { stdio: 'inherit' });
    if (perf) await pause(500);
    const before = threadTimes(pid);
    const done = await load(requests);
    const after = threadTimes(pid);
    if (perf) {
      const exited = once(perf, 'exit');
      perf.kill('SIGINT');
      await exited;
    }
    return { done, cpu: perRequest(before, after, done) };
  });
  if (process.env.BENCH_WINDOW_DIR) writeFileSync(resolve(process.env.BENCH_WINDOW_DIR, `${label}.txt`), window);
  const traces = Object.fromEntries(Object.entries(TRACES).map(([name, pattern]) => [name, window.match(pattern)?.length ?? 0]));
  return { requests: value.done, cpu: value.cpu, gc: gcWindow(window, value.done), traces };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [a, b, runs = '3', requests = '30000', warmup = '10000'] = process.argv.slice(2);
  if (!a || !b) throw new Error('usage: npx tsx bench/thread-cpu.ts <checkout A> <checkout B> [runs] [requests] [warm-up]');
  if (!hasTaskset) process.stderr.write('thread-cpu: no taskset, the server is not pinned\n');
  // The load generator (this process) on the load core, the server on the server core, as bench:ab places them.
  pinProcess(process.pid, LOAD_CORE);
  const guardrails = process.env.BENCH_AB_CHAIN === 'guardrails';
  if (guardrails) process.env.BENCH_TOOL ??= 'result_2k';
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const envOf = (on: string): Record<string, string> => (guardrails ? { BENCH_GUARDRAILS: on } : {});
  const sides = {
    A: { checkout: resolve(a), env: envOf('off'), windows: [] as ThreadWindow[] },
    B: { checkout: resolve(b), env: envOf('on'), windows: [] as ThreadWindow[] },
  };
  for (let run = 0; run < Number(runs); run += 1) {
    for (const side of run % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const window = await measure(sides[side].checkout, sides[side].env, `${side}-${run + 1}`, Number(requests), Number(warmup), connections);
      sides[side].windows.push(window);
      const cpu = Object.entries(window.cpu).map(([name, micros]) => `${name} ${micros.toFixed(1)}`).join(', ');
      process.stdout.write(`${side} run ${run + 1}: µs/request ${cpu}; scavenges ${window.gc.gcs - window.gc.markCompacts}, full ${window.gc.markCompacts}, ` +
        `allocated ${window.gc.allocatedPerRequest.toFixed(0)} B/request; traces ${JSON.stringify(window.traces)}\n`);
    }
  }
  for (const [side, { checkout, env, windows }] of Object.entries(sides)) {
    const names = [...new Set(windows.flatMap((window) => Object.keys(window.cpu)))];
    const cpu = names.map((name) => `${name} ${median(windows.map((window) => window.cpu[name] ?? 0)).toFixed(1)}`).join(', ');
    const total = median(windows.map((window) => Object.values(window.cpu).reduce((sum, micros) => sum + micros, 0))).toFixed(1);
    const per10k = median(windows.map((window) => ((window.gc.gcs - window.gc.markCompacts) * 10_000) / window.requests)).toFixed(1);
    process.stdout.write(`${side} ${checkout} ${JSON.stringify(env)}: median µs/request total ${total}: ${cpu}; scavenges per 10k requests ${per10k}, ` +
      `allocated ${median(windows.map((window) => window.gc.allocatedPerRequest)).toFixed(0)} B/request\n`);
  }
}
