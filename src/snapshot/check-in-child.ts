// The start's check of many distinct file tenants runs in a child process: at 100,000 tenants of different texts
// its 100,000 compiles (~24 KB allocated each, ~1 KB of it surviving a scavenge) grew the gateway's young
// generation to its 64 MiB semi-spaces on Node 24, resident for the process's life (bench/results.md, ten28).
// Not a worker thread: a worker's heap and the memory its thread allocated stayed resident after it ended (~70
// MiB here, bench/results.md, ten29); a process gives all of it back. The gateway gets a few positions.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CompactTenants } from '../config/compact-tenants.js';
import type { GatewayConfig, OnStoreUnavailable } from '../config/types.js';
import { childNodeFlags } from './child-node-flags.js';

// From the build its `.js`; from sources (vitest, tsx) its `.ts`, run through tsx's loader.
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const ENTRY = fileURLToPath(new URL(`./check-child.${FROM_SOURCES ? 'ts' : 'js'}`, import.meta.url));
const SOURCES_ARGV = FROM_SOURCES ? ['--import', import.meta.resolve('tsx')] : [];
// The child's memory at 100,000 distinct texts was 341-348 MiB resident, 145-164 with these (bench/results.md, ten31):
// its semi-spaces grew to 64 MiB each on Node 24 (1 MiB each was no smaller than 4 and slower), its old space to
// ~60 MiB of garbage (it holds its modules, ~20 MiB, and one tenant at a time; the cap makes V8 collect sooner,
// with room to spare), and V8's threads' malloc arenas held ~25 MiB. A heap that still runs out ends the child,
// and the gateway checks the tenants itself. An operator's own MALLOC_ARENA_MAX is kept.
const HEAP_ARGV = ['--max-semi-space-size=4', '--max-old-space-size=128'];
const MALLOC_ARENAS = '2';

/** What the child is sent on its channel; the table's buffers follow on its stdin (`TableSizes`). */
export interface CheckRequest {
  /** The table's buffers' lengths, in the order they are written: index, order (Int32 elements), bytes. */
  readonly sizes: readonly [index: number, order: number, bytes: number];
  /** The module whose `builtinPolicies` the gateway's chains are made of (the composition root names it). */
  readonly policiesModule: string;
  readonly baseDir: string;
  readonly guardrails: GatewayConfig['guardrails'];
  readonly auditEnabled: boolean | undefined;
  readonly onStoreUnavailable: OnStoreUnavailable | undefined;
}

/**
 * What the child answers: the positions whose tenants only the caller can compile (Cedar, custom policies), and
 * the first position whose compile failed there (-1: none). Positions in table order.
 */
export interface CheckAnswer {
  readonly inCaller: readonly number[];
  readonly failedAt: number;
}

/** The child's answer, or why there is none (the caller then checks every tenant itself). */
export type CheckOutcome = { readonly answer: CheckAnswer } | { readonly unanswered: string };

export type CheckSettings = Omit<CheckRequest, 'sizes'>;

/** How the child is run: the gateway's own process by default. */
export interface CheckRun {
  /** Past this the child is killed and counts as unanswered (default: `checkDeadlineMs` of the table's size). */
  readonly deadlineMs?: number;
  /** Kills the child (the start failed elsewhere). */
  readonly signal?: AbortSignal;
  readonly execArgv?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The child's time: its start (~1 s of modules) and ~50 µs a tenant on a loaded 2-core machine, with room for a
 * machine 20 times slower (100,000 tenants: 130 s). A child past it is stuck, not slow.
 */
export function checkDeadlineMs(tenants: number): number {
  return 30_000 + tenants;
}

/**
 * Compiles in a child process each tenant of `compact` whose text no earlier tenant shares, as the start's
 * check does. Unanswered when the child fails for any other reason than a tenant's configuration, does not answer
 * within its deadline (then killed), or is aborted. The child dies with the gateway: it ends when its channel
 * closes, and is killed when this process exits.
 */
export function checkTenantsInChild(compact: CompactTenants, settings: CheckSettings, run: CheckRun = {}): Promise<CheckOutcome> {
  const { bytes, index, order } = compact.data;
  const request: CheckRequest = { ...settings, sizes: [index.length, order.length, bytes.byteLength] };
  const { execArgv = process.execArgv, env = process.env, deadlineMs = checkDeadlineMs(compact.size), signal } = run;
  return new Promise((resolve) => {
    let settled = false;
    const cleanups: Array<() => void> = [];
    const settle = (outcome: CheckOutcome): void => {
      if (settled) return;
      settled = true;
      for (const cleanup of cleanups) cleanup();
      resolve(outcome);
    };
    if (signal?.aborted) return settle({ unanswered: 'aborted' });
    try {
      // The gateway's NODE_OPTIONS is read into the flags, not inherited: dropped flags would come back through it.
      const { NODE_OPTIONS, ...childEnv } = env;
      const child = fork(ENTRY, [], {
        serialization: 'advanced',
        execArgv: [...childNodeFlags(execArgv, NODE_OPTIONS), ...SOURCES_ARGV, ...HEAP_ARGV],
        env: { MALLOC_ARENA_MAX: MALLOC_ARENAS, ...childEnv },
        stdio: ['pipe', 'ignore', 'inherit', 'ipc'],
      });
      const kill = (): void => void child.kill('SIGKILL');
      const giveUp = (reason: string) => (): void => {
        kill();
        settle({ unanswered: reason });
      };
      const timer = setTimeout(giveUp(`no answer within ${deadlineMs} ms`), deadlineMs);
      const onAbort = giveUp('aborted');
      // Synchronous, on any exit of this process, so no child outlives a gateway that exits while it runs.
      process.once('exit', kill);
      signal?.addEventListener('abort', onAbort, { once: true });
      // The exit hook goes once settled too: a child that failed to spawn never emits 'exit'.
      cleanups.push(() => clearTimeout(timer), () => signal?.removeEventListener('abort', onAbort), () => process.removeListener('exit', kill));
      child.once('exit', (code, killedBy) => {
        settle({ unanswered: killedBy ? `the child was killed (${killedBy})` : `the child ended with code ${code}` });
      });
      child.once('message', (answer: CheckAnswer) => settle({ answer }));
      child.once('error', (error) => {
        kill();
        settle({ unanswered: error.message });
      });
      child.send(request);
      // The table goes on stdin from its own memory: sent on the channel it was serialised into a ~25 MiB copy
      // (at 100,000 distinct texts) that stayed in the gateway's malloc heap (bench/results.md, ten29).
      const stdin = child.stdin!;
      stdin.on('error', kill);
      for (const view of [index, order, bytes]) stdin.write(Buffer.from(view.buffer, view.byteOffset, view.byteLength));
      stdin.end();
    } catch (error) {
      settle({ unanswered: error instanceof Error ? error.message : String(error) });
    }
  });
}
