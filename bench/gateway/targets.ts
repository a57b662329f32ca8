// The servers a paired bench measures, and the rounds it measures them in: every round starts every
// server afresh (on this VM a process's speed depends on its own luck and warm-up, so a target measured
// in one process measures that process), checks it answers, then drives each in turn, every target
// taking every place in the order equally often (roundOrder). Shared by `npm run bench` (bench/gateway.ts)
// and `npm run bench:ab`.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { packageRoot } from '../../src/config/demo.js';
import { descendantPids, firstLine, nodeCommand, pinProcess, processCpuMicros, runLoad, SERVER_CORE, stopChild } from '../pinned.js';
import type { MeasuredRun } from '../summary.js';
import type { LoadSpec } from './load.js';
import { benchToken } from './token.js';

const here = resolve(packageRoot(), 'bench', 'gateway');

export interface Target {
  label: string;
  /** A server script: a path relative to bench/gateway/ of this checkout, or absolute (another checkout's). */
  script: string;
  /** Arguments after the script (bench/mcp-targets.ts takes the server's name). */
  args?: string[];
  env: Record<string, string>;
  /**
   * toolgate only: the token its /metrics answers on the API port. With it, every run is checked against
   * toolgate's own count of failed calls (a failed call answers 200 with ok:false, fast, and says nothing
   * about the tool behind it).
   */
  metricsToken?: string;
  child?: ChildProcess;
  /** The processes the server spawned (a stdio upstream): their CPU is counted with the server's. */
  upstreams?: number[];
  /** Where the load goes: the server's POST /v1/execute. */
  url?: string;
  runs: MeasuredRun[];
}

/** What every request of a gateway bench sends: the demo get_weather call with one HS256 token. */
export async function benchRequest(): Promise<{ headers: Record<string, string>; body: string }> {
  const token = await benchToken();
  return {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    // BENCH_TOOL=result_2k: the guardrails comparison's 2 KiB result (bench/gateway/result-2k.mjs).
    body: JSON.stringify(process.env.BENCH_TOOL === 'result_2k' ? { name: 'result_2k', arguments: {} } : { name: 'get_weather', arguments: { city: 'Paris' } }),
  };
}

/** The address a server reports on its first line: `{"port":N}` (bench/gateway/*-server.ts) or `LISTENING <url>` (bench/mcp-targets.ts). */
function listeningUrl(line: string): string | undefined {
  if (line.startsWith('LISTENING ')) return line.slice('LISTENING '.length);
  if (!line.startsWith('{')) return undefined;
  const { port } = JSON.parse(line) as { port?: number };
  return typeof port === 'number' ? `http://127.0.0.1:${port}/v1/execute` : undefined;
}

async function startServer(target: Target): Promise<void> {
  // Servers start up on both cores (four start-ups on one core took 13 s of every round) and are pinned
  // to the server core once listening, with the upstreams they spawned.
  const [command, args] = nodeCommand(undefined, resolve(here, target.script), target.args);
  const child = spawn(command, args, { cwd: packageRoot(), env: { ...process.env, ...target.env }, stdio: ['pipe', 'pipe', 'inherit'] });
  target.child = child;
  // Generous: three servers (and their upstreams) start at once, and a loaded machine starts them slowly.
  target.url = await firstLine(child, target.label, 180_000, listeningUrl);
  target.upstreams = child.pid === undefined ? [] : descendantPids(child.pid);
  for (const pid of [child.pid, ...target.upstreams]) pinProcess(pid, SERVER_CORE);
}

/** CPU time (µs) used so far by a target's server and the upstreams it spawned; undefined without /proc. */
function cpuMicros(target: Target): number | undefined {
  const own = processCpuMicros(target.child?.pid);
  if (own === undefined) return undefined;
  return (target.upstreams ?? []).reduce((sum, pid) => sum + (processCpuMicros(pid) ?? 0), own);
}

/**
 * toolgate's count of finished calls that failed, from its Prometheus text on the API port. Calls
 * cancelled by their client (`outcome="cancelled"`: autocannon abandons the calls in flight when a run
 * ends) are not failures.
 */
export async function failedCalls(executeUrl: string, metricsToken: string): Promise<number> {
  const response = await fetch(executeUrl.replace(/\/v1\/execute$/, '/metrics'), { headers: { authorization: `Bearer ${metricsToken}` } });
  if (!response.ok) throw new Error(`toolgate /metrics answered ${response.status}`);
  let total = 0;
  for (const match of (await response.text()).matchAll(/^toolgate_tool_calls_total\{[^}]*outcome="([^"]+)"[^}]*\} (\d+)/gm)) {
    if (match[1] !== 'ok' && match[1] !== 'cancelled') total += Number(match[2]);
  }
  return total;
}

/** One measured run (after its warm-up, when the spec has one, in the same load process). */
async function drive(target: Target, spec: Omit<LoadSpec, 'url'>): Promise<MeasuredRun> {
  const url = target.url!;
  const failedBefore = target.metricsToken === undefined ? 0 : await failedCalls(url, target.metricsToken);
  let before = cpuMicros(target);
  const run = await runLoad({ ...spec, url }, target.label, () => {
    before = cpuMicros(target);
  });
  const after = cpuMicros(target);
  if (target.metricsToken !== undefined) {
    const failed = (await failedCalls(url, target.metricsToken)) - failedBefore;
    if (failed > 0) throw new Error(`${target.label}: ${failed} calls failed (toolgate's metrics)`);
  }
  if (before === undefined || after === undefined || run.requests === 0) return run;
  return { ...run, serverCpuMicrosPerRequest: (after - before) / run.requests };
}

/** One request before any load: the target must answer 200, and toolgate ok:true, or the numbers mean nothing. */
async function checkTarget(target: Target, headers: Record<string, string>, body: string): Promise<void> {
  const response = await fetch(target.url!, { method: 'POST', headers, body });
  const result = (await response.json()) as { ok?: boolean };
  if (response.status !== 200 || result.ok === false) throw new Error(`${target.label} answered ${response.status} ${JSON.stringify(result)}`);
}

/**
 * The order of round `round`: the targets rotated by one place each round, and every n rounds the other
 * way round, so over 2n rounds each target runs first, in between and last equally often. Reversing every
 * other round left a middle target always in the middle: an A/A bench:ab of one build (bench/results.md,
 * issue 36) put the side that alternated between first and last 5 % behind the one always in the middle.
 */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const shift = round % targets.length;
  const rotated = [...targets.slice(shift), ...targets.slice(0, shift)];
  return Math.floor(round / targets.length) % 2 === 0 ? rotated : rotated.reverse();
}

/** Measures every target `rounds` times, in fresh processes each round; the runs land in `target.runs`. */
export async function measureRounds(targets: Target[], rounds: number, spec: Omit<LoadSpec, 'url'>): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    try {
      await Promise.all(targets.map(startServer));
      for (const target of targets) await checkTarget(target, spec.headers, spec.body);
      for (const target of roundOrder(targets, round)) target.runs.push(await drive(target, spec));
    } finally {
      await Promise.all(targets.map((target) => stopChild(target.child)));
    }
  }
}
