// Process placement shared by the benches: servers (and the stdio upstreams they spawn, which inherit
// the affinity) on core 1, the load generator in its own process on core 0. Unpinned, a 2-core machine
// lets the scheduler put server, upstream and load generator anywhere, and the numbers are noise.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../src/config/demo.js';
import type { LoadSpec, LoadSummary } from './gateway/load.js';

export const SERVER_CORE = '1';
export const LOAD_CORE = '0';

export const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;

/** argv for a node process running a TS file, pinned to a core when taskset exists (and a core is given). */
export function nodeCommand(core: string | undefined, script: string, args: string[] = []): [string, string[]] {
  const node = [process.execPath, '--import', 'tsx', script, ...args];
  return hasTaskset && core !== undefined ? ['taskset', ['-c', core, ...node]] : [node[0]!, node.slice(1)];
}

/** Pins a running process, every thread of it, to a core (servers start on both cores, then are pinned to be measured). */
export function pinProcess(pid: number | undefined, core: string): void {
  if (hasTaskset && pid !== undefined) spawnSync('taskset', ['-a', '-p', '-c', core, String(pid)], { stdio: 'ignore' });
}

/** The first stdout line of a child that `accept` maps to a value; rejects if the child exits first or is too slow. */
export async function firstLine<T>(child: ChildProcess, what: string, timeoutMs: number, accept: (line: string) => T | undefined): Promise<T> {
  const lines = createInterface({ input: child.stdout! });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return await new Promise<T>((resolve, reject) => {
      lines.on('line', (line) => {
        const value = accept(line);
        if (value !== undefined) resolve(value);
      });
      once(child, 'exit').then(([code]) => reject(new Error(`${what} exited (${String(code)}) before reporting`)), reject);
    });
  } finally {
    clearTimeout(timer);
    lines.close();
  }
}

/** One autocannon run in its own process on the load core; its summary. `onWarmedUp` runs between a warm-up and the measured run. */
export async function runLoad(spec: LoadSpec, what: string, onWarmedUp?: () => void): Promise<LoadSummary> {
  const [command, args] = nodeCommand(LOAD_CORE, join(packageRoot(), 'bench', 'gateway', 'load.ts'), [JSON.stringify(spec)]);
  const child = spawn(command, args, { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'inherit'] });
  return firstLine(child, `load on ${what}`, (spec.durationSec + (spec.warmupSec ?? 0) + 30) * 1000, (line) => {
    const parsed = JSON.parse(line) as LoadSummary | { warmedUp: true };
    if (!('warmedUp' in parsed)) return parsed;
    onWarmedUp?.();
    return undefined;
  });
}

/** Stops a server child (SIGTERM, SIGKILL after 5 s). */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  // A child killed by a signal has no exit code, only a signal code: either way it has already exited.
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/**
 * CPU time (user + system, µs) a process has used so far, from /proc; undefined where there is no /proc.
 * Per-request CPU is steadier than req/s on a shared VM: it does not count time the core spent elsewhere.
 */
export function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1e6;
  } catch {
    return undefined;
  }
}

/** A process's descendants (the stdio upstreams a server spawned), by scanning /proc; [] without /proc. */
export function descendantPids(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const parentOf = new Map<number, number>();
  for (const name of entries) {
    try {
      parentOf.set(Number(name), Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  const visit = (parent: number): void => {
    for (const [child, ppid] of parentOf) {
      if (ppid === parent) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}
