import { AsyncResource } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { stopMessage, type HostCall, type SandboxOutcome, type SandboxStop } from './engine.js';
import type { SandboxLimits } from './limits.js';
import type { FromWorker, ToWorker, WorkerData } from './sandbox-worker.js';

export { stopMessage, type HostAnswer, type HostCall, type SandboxOutcome, type SandboxStop } from './engine.js';

/**
 * The bounds of the worker pool scripts run in (docs/code-mode.md#limits). A worker runs one script at a
 * time, so a script stuck in one native operation holds one worker, never the event loop or another script.
 */
export const SANDBOX_WORKERS = Math.max(2, availableParallelism());
/** Scripts waiting for a worker; beyond it a script is refused at once (`busy`). */
export const SANDBOX_QUEUE = 64;
/**
 * One tenant's share of the pool: scripts waiting on slow tools hold their workers, so no tenant may hold
 * every worker (one is always left for the others) nor fill the queue (docs/code-mode.md#the-sandbox).
 */
export const SANDBOX_WORKERS_PER_TENANT = Math.max(1, SANDBOX_WORKERS - 1);
export const SANDBOX_QUEUE_PER_TENANT = SANDBOX_QUEUE / 4;
/** A worker is replaced after this many scripts (and after any memory stop), which frees its WebAssembly memory. */
export const SCRIPTS_PER_WORKER = 50;
/** How long past its limit the main thread waits for a worker before terminating it. */
export const HARD_STOP_GRACE_MS = 500;
/** V8's own heaps of a worker; the QuickJS heap lives in its WebAssembly memory, capped below. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };
/**
 * A worker's WebAssembly memory cap: twice the script's memory limit (the heap walk stops a script past
 * the limit itself; the slack is the allocator's) plus the engine's own 16 MiB. Workers are made per cap.
 */
const wasmMemoryFor = (limits: SandboxLimits): number => 2 * limits.memoryBytes + 16 * 1024 * 1024;

/**
 * Runs `source` in a QuickJS runtime in a sandbox worker under `limits`; each `tools.<name>(args)` call of
 * the script runs `host` on this thread. A worker that does not answer within the script's limit (plus a
 * grace) is terminated and replaced. docs/code-mode.md#the-sandbox
 */
export function runInSandbox(source: string, host: HostCall, limits: SandboxLimits, cancel?: AbortSignal, tenant = ''): Promise<SandboxOutcome> {
  // A worker's messages arrive in the context the worker was made in: each call runs in its own caller's
  // (trace, request), never in another tenant's.
  const hostHere: HostCall = AsyncResource.bind(host);
  return (pool ??= new SandboxPool()).run({ source, host: hostHere, limits, cancel, tenant, queuedAt: performance.now() });
}

let pool: SandboxPool | undefined;

interface Job {
  readonly source: string;
  readonly host: HostCall;
  readonly limits: SandboxLimits;
  readonly cancel: AbortSignal | undefined;
  readonly tenant: string;
  readonly queuedAt: number;
}

interface Slot {
  readonly worker: Worker;
  /** False when the worker failed before it was ready. */
  readonly ready: Promise<boolean>;
  served: number;
  readonly wasmMemoryBytes: number;
}

/** What a run ended with, and whether its worker must go. */
interface Ended {
  outcome: SandboxOutcome;
  retire: boolean;
}

const stopped = (stop: SandboxStop, limits: SandboxLimits, toolCalls = 0, message = stopMessage(stop, limits)): SandboxOutcome => ({ ok: false, stop, message, logs: [], logsTruncated: false, toolCalls });

class SandboxPool {
  private readonly idle: Slot[] = [];
  private workers = 0;
  private readonly queue: Array<{ job: Job; resolve: (outcome: SandboxOutcome) => void }> = [];
  /** Workers each tenant holds now. */
  private readonly held = new Map<string, number>();

  run(job: Job): Promise<SandboxOutcome> {
    const queued = this.queue.reduce((count, entry) => count + (entry.job.tenant === job.tenant ? 1 : 0), 0);
    if (this.queue.length >= SANDBOX_QUEUE || queued >= SANDBOX_QUEUE_PER_TENANT) return Promise.resolve(stopped('busy', job.limits));
    return new Promise((resolve) => {
      this.queue.push({ job, resolve });
      this.pump();
    });
  }

  private pump(): void {
    for (;;) {
      // The oldest script whose tenant holds less than its share: a tenant at its share waits for its own.
      const index = this.queue.findIndex((entry) => (this.held.get(entry.job.tenant) ?? 0) < SANDBOX_WORKERS_PER_TENANT);
      const next = this.queue[index];
      if (!next) return;
      const cap = wasmMemoryFor(next.job.limits);
      const idle = this.idle.findIndex((slot) => slot.wasmMemoryBytes === cap);
      let slot = idle >= 0 ? this.idle.splice(idle, 1)[0] : undefined;
      // Every worker is idle with another cap: one makes room for a worker of this script's cap.
      if (!slot && this.workers >= SANDBOX_WORKERS) this.retire(this.idle.shift());
      if (!slot && this.workers < SANDBOX_WORKERS) slot = this.spawn(cap);
      if (!slot) return;
      this.queue.splice(index, 1);
      void this.serve(slot, next.job).then(next.resolve);
    }
  }

  private spawn(wasmMemoryBytes: number): Slot {
    this.workers += 1;
    const workerData: WorkerData = { wasmMemoryBytes };
    const worker = new Worker(WORKER_ENTRY, { ...WORKER_OPTIONS, workerData, resourceLimits: RESOURCE_LIMITS });
    // A worker must never keep the process alive, nor take it down.
    worker.unref();
    const ready = new Promise<boolean>((resolve) => {
      worker.once('message', (message: FromWorker) => resolve(message.type === 'ready'));
      worker.once('error', () => resolve(false));
      worker.once('exit', () => resolve(false));
    });
    worker.on('error', () => undefined);
    return { worker, ready, served: 0, wasmMemoryBytes };
  }

  private retire(slot: Slot | undefined): void {
    if (!slot) return;
    this.workers -= 1;
    void slot.worker.terminate();
  }

  private async serve(slot: Slot, job: Job): Promise<SandboxOutcome> {
    this.held.set(job.tenant, (this.held.get(job.tenant) ?? 0) + 1);
    let ended: Ended;
    if (!(await slot.ready)) ended = { outcome: stopped('script_error', job.limits, 0, 'the sandbox could not start'), retire: true };
    else {
      const remaining = Math.floor(job.limits.wallTimeMs - (performance.now() - job.queuedAt));
      if (job.cancel?.aborted) ended = { outcome: stopped('cancelled', job.limits), retire: false };
      else if (remaining <= 0) ended = { outcome: stopped('wall_time', job.limits), retire: false };
      else ended = await drive(slot.worker, job, remaining);
    }
    slot.served += 1;
    const held = (this.held.get(job.tenant) ?? 1) - 1;
    if (held > 0) this.held.set(job.tenant, held);
    else this.held.delete(job.tenant);
    if (ended.retire || slot.served >= SCRIPTS_PER_WORKER) this.retire(slot);
    else this.idle.push(slot);
    this.pump();
    return ended.outcome;
  }
}

/**
 * One script on one worker. The main thread keeps its own clocks: the wall deadline, and the time the
 * worker has computed with no tool call outstanding (a single native operation is not interruptible
 * inside the worker); past either by the grace, the worker is terminated.
 */
function drive(worker: Worker, job: Job, remainingMs: number): Promise<Ended> {
  const { limits, host } = job;
  return new Promise((resolve) => {
    const inner = new AbortController();
    let outstanding = 0;
    let toolCalls = 0;
    let computedMs = 0;
    let computingSince = performance.now();
    const post = (message: ToWorker): void => worker.postMessage(message);
    const end = (ended: Ended): void => {
      clearTimeout(wall);
      clearInterval(watchdog);
      clearTimeout(cancelGrace);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      job.cancel?.removeEventListener('abort', onCancel);
      inner.abort(new Error('script finished'));
      resolve(ended);
    };
    const kill = (stop: SandboxStop): void => end({ outcome: stopped(stop, limits, toolCalls), retire: true });
    const onMessage = (message: FromWorker): void => {
      if (message.type === 'done') {
        const { outcome } = message;
        // The worker was given the wall time left after queueing; the message names the script's limit.
        const fixed = !outcome.ok && outcome.stop === 'wall_time' ? { ...outcome, message: stopMessage('wall_time', limits) } : outcome;
        end({ outcome: fixed, retire: !outcome.ok && outcome.stop === 'memory' });
      } else if (message.type === 'call') {
        toolCalls += 1;
        if (outstanding++ === 0) computedMs += performance.now() - computingSince;
        void host(message.name, message.argsJson, inner.signal).then((answer) => {
          if (inner.signal.aborted) return;
          if (--outstanding === 0) computingSince = performance.now();
          post({ type: 'answer', call: message.call, answer });
        });
      }
    };
    // Out of V8 heap (resourceLimits) or any crash: the worker is gone.
    const onExit = (): void => kill('memory');
    let cancelGrace: NodeJS.Timeout | undefined;
    const onCancel = (): void => {
      post({ type: 'cancel' });
      cancelGrace = setTimeout(() => kill('cancelled'), HARD_STOP_GRACE_MS);
    };
    const wall = setTimeout(() => kill('wall_time'), remainingMs + HARD_STOP_GRACE_MS);
    const watchdog = setInterval(() => {
      if (outstanding === 0 && computedMs + (performance.now() - computingSince) > limits.cpuTimeMs + HARD_STOP_GRACE_MS) kill('cpu_time');
    }, WATCHDOG_EVERY_MS);
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    job.cancel?.addEventListener('abort', onCancel, { once: true });
    post({ type: 'run', source: job.source, limits: { ...limits, wallTimeMs: remainingMs } });
  });
}

const WATCHDOG_EVERY_MS = 50;

/**
 * The worker entry beside this module: `sandbox-worker.js` when running from the build (dist/), the
 * `.ts` source when running from sources (vitest, tsx). Node cannot load TypeScript in a worker by itself,
 * and a worker's `execArgv: ['--import', 'tsx']` does not reach the entry on Node 20, so from sources the
 * worker starts from a one-line bootstrap that registers tsx's loader and then imports the entry.
 */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const ENTRY_URL = new URL(`./sandbox-worker.${FROM_SOURCES ? 'ts' : 'js'}`, import.meta.url);
const WORKER_ENTRY: URL | string = FROM_SOURCES
  ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(ENTRY_URL.href)}); })`
  : ENTRY_URL;
const WORKER_OPTIONS = { eval: FROM_SOURCES };
