// The servers a gateway bench measures, and the rounds it measures them in: every round starts every
// server afresh (on this VM a process's speed depends on its own luck and warm-up, so a target measured
// in one process measures that process), checks it answers ok:true, then drives each in turn, the order
// reversed every other round. Shared by `npm run bench` (bench/gateway.ts) and `npm run bench:ab`.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { packageRoot } from '../../src/config/demo.js';
import { firstLine, nodeCommand, pinProcess, processCpuMicros, runLoad, SERVER_CORE, stopChild } from '../pinned.js';
import type { MeasuredRun } from '../summary.js';
import type { LoadSpec } from './load.js';
import { benchToken } from './token.js';

const here = resolve(packageRoot(), 'bench', 'gateway');

export interface Target {
  label: string;
  /** A server script: a path relative to bench/gateway/ of this checkout, or absolute (another checkout's). */
  script: string;
  env: Record<string, string>;
  child?: ChildProcess;
  port?: number;
  runs: MeasuredRun[];
}

/** What every request of a gateway bench sends: the demo get_weather call with one HS256 token. */
export async function benchRequest(): Promise<{ headers: Record<string, string>; body: string }> {
  const token = await benchToken();
  return {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'get_weather', arguments: { city: 'Paris' } }),
  };
}

async function startServer(target: Target): Promise<void> {
  // Servers start up on both cores (four start-ups on one core took 13 s of every round) and are pinned
  // to the server core once listening.
  const [command, args] = nodeCommand(undefined, resolve(here, target.script));
  const child = spawn(command, args, { cwd: packageRoot(), env: { ...process.env, ...target.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  target.child = child;
  const { port } = await firstLine(child, target.label, 30_000, (line) => JSON.parse(line) as { port: number });
  pinProcess(child.pid, SERVER_CORE);
  target.port = port;
}

/** One measured run (after its warm-up, when the spec has one, in the same load process). */
async function drive(target: Target, spec: Omit<LoadSpec, 'url'>): Promise<MeasuredRun> {
  let before = processCpuMicros(target.child?.pid);
  const run = await runLoad({ ...spec, url: `http://127.0.0.1:${target.port}/v1/execute` }, target.label, () => {
    before = processCpuMicros(target.child?.pid);
  });
  const after = processCpuMicros(target.child?.pid);
  if (before === undefined || after === undefined || run.requests === 0) return run;
  return { ...run, serverCpuMicrosPerRequest: (after - before) / run.requests };
}

/** One request before any load: the target must answer 200 with ok:true, or the numbers mean nothing. */
async function checkTarget(target: Target, headers: Record<string, string>, body: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${target.port}/v1/execute`, { method: 'POST', headers, body });
  const result = (await response.json()) as { ok?: boolean };
  if (response.status !== 200 || result.ok !== true) throw new Error(`${target.label} answered ${response.status} ${JSON.stringify(result)}`);
}

/** Measures every target `rounds` times, in fresh processes each round; the runs land in `target.runs`. */
export async function measureRounds(targets: Target[], rounds: number, spec: Omit<LoadSpec, 'url'>): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    try {
      await Promise.all(targets.map(startServer));
      for (const target of targets) await checkTarget(target, spec.headers, spec.body);
      // Alternate the order each round as well, so no target always runs first.
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) target.runs.push(await drive(target, spec));
    } finally {
      await Promise.all(targets.map((target) => stopChild(target.child)));
    }
  }
}
