// The start's check of many distinct file tenants runs in a child process: at 100,000 tenants of different texts
// its 100,000 compiles (~24 KB allocated each, ~1 KB of it surviving a scavenge) grew the gateway's young
// generation to its 64 MiB semi-spaces on Node 24, resident for the process's life (bench/results.md, ten28).
// Not a worker thread: a worker's heap and the memory its thread allocated stayed resident after it ended (~70
// MiB here, bench/results.md, ten29); a process gives all of it back. The gateway gets a few positions.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CompactTenants } from '../config/compact-tenants.js';
import type { GatewayConfig, OnStoreUnavailable } from '../config/types.js';

// From the build its `.js`; from sources (vitest, tsx) its `.ts`, run through tsx's loader.
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const ENTRY = fileURLToPath(new URL(`./check-child.${FROM_SOURCES ? 'ts' : 'js'}`, import.meta.url));
const EXEC_ARGV = FROM_SOURCES ? ['--import', import.meta.resolve('tsx')] : [];

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

export type CheckSettings = Omit<CheckRequest, 'sizes'>;

/**
 * Compiles in a child process each tenant of `compact` whose text no earlier tenant shares, as the start's
 * check does. Undefined when the child fails for any other reason than a tenant's configuration (the caller then
 * checks every tenant itself).
 */
export function checkTenantsInChild(compact: CompactTenants, settings: CheckSettings): Promise<CheckAnswer | undefined> {
  const { bytes, index, order } = compact.data;
  const request: CheckRequest = { ...settings, sizes: [index.length, order.length, bytes.byteLength] };
  return new Promise((resolve) => {
    let answered = false;
    const settle = (answer: CheckAnswer | undefined): void => {
      if (!answered) resolve(answer);
      answered = true;
    };
    try {
      // Its own node options, not the gateway's (a preloaded module, heap flags); the environment is the gateway's.
      const child = fork(ENTRY, [], { serialization: 'advanced', execArgv: EXEC_ARGV, stdio: ['pipe', 'ignore', 'inherit', 'ipc'] });
      child.once('message', (answer: CheckAnswer) => settle(answer));
      child.once('error', () => settle(undefined));
      child.once('exit', () => settle(undefined));
      child.send(request);
      // The table goes on stdin from its own memory: sent on the channel it was serialised into a ~25 MiB copy
      // (at 100,000 distinct texts) that stayed in the gateway's malloc heap (bench/results.md, ten29).
      const stdin = child.stdin!;
      stdin.on('error', () => child.kill());
      for (const view of [index, order, bytes]) stdin.write(Buffer.from(view.buffer, view.byteOffset, view.byteLength));
      stdin.end();
    } catch {
      settle(undefined);
    }
  });
}
