import { AsyncResource } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { stopMessage, type HostCall, type SandboxOutcome, type SandboxStop } from './engine.js';
import { HardStopCooldowns } from './hard-stop-cooldown.js';
import type { SandboxLimits } from './limits.js';
import type { FromWorker, ToWorker, WorkerData } from './sandbox-worker.js';
import { newSliceMeter, readSlice } from './slice-meter.js';

export { argumentsTooLarge, stopMessage, type HostAnswer, type HostCall, type SandboxOutcome, type SandboxStop } from './engine.js';

/**
 * The bounds of the worker pool scripts run in (docs/code-mode.md#the-sandbox). A worker holds several
 * scripts at once and computes one at a time: a script waiting for a tool call holds only its runtime, never
 * the worker, so scripts waiting on slow tools leave every worker to the others.
 */
export const SANDBOX_WORKERS = Math.max(2, availableParallelism());
/**
 * Workers the pool may run so that tenants need not share one: a worker holds one tenant's scripts while
 * this allows, because a worker terminated by force loses every script it holds. The workers past
 * `SANDBOX_WORKERS` start as spares (one empty worker kept ready for a tenant holding none) and go after
 * `IDLE_WORKER_MS` without a script. The scripts held at once stay `SANDBOX_SCRIPTS` whatever their number.
 */
export const SANDBOX_WORKERS_MAX = 2 * SANDBOX_WORKERS;
/** How long a worker past `SANDBOX_WORKERS` stays without a script before it goes. */
export const IDLE_WORKER_MS = 30_000;
/** Scripts one worker holds at once (computing or waiting); each has its own runtime in the worker's memory. */
export const SCRIPTS_PER_WORKER_AT_ONCE = 16;
/** Scripts the pool holds at once, over all its workers. */
export const SANDBOX_SCRIPTS = SANDBOX_WORKERS * SCRIPTS_PER_WORKER_AT_ONCE;
/**
 * One tenant's share of the scripts held at once. Past the pool's size a tenant holding more scripts than
 * another one asking gives up its newest waiting one (`busy`), so any number of tenants each get their turn.
 */
export const SANDBOX_SCRIPTS_PER_TENANT = SANDBOX_SCRIPTS / 2;
/** Scripts waiting for room; beyond it a script is refused at once (`busy`). */
export const SANDBOX_QUEUE = 64;
export const SANDBOX_QUEUE_PER_TENANT = SANDBOX_QUEUE / 4;
/** A worker is replaced after this many scripts (and after any memory stop), which frees its WebAssembly memory. */
export const SCRIPTS_PER_WORKER = 50;
/** How long past its wall limit (or a cancel) the main thread waits for a script before answering for it. */
export const HARD_STOP_GRACE_MS = 500;
/**
 * How far past its CPU limit a slice may run before the main thread terminates its worker: half the limit,
 * at least 50 ms (a slice is measured in wall time, which a loaded machine stretches) and at most the grace.
 */
export const cpuGraceMs = (limits: SandboxLimits): number => Math.min(HARD_STOP_GRACE_MS, Math.max(50, Math.floor(limits.cpuTimeMs / 2)));
/** V8's own heaps of a worker; the QuickJS heaps live in its WebAssembly memory, capped below. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };
/**
 * A worker's WebAssembly memory cap: room for each script it holds at its memory limit plus one more (the
 * heap walk stops a script past the limit; the slack is one script's overshoot inside a native call) plus the
 * engine's own 16 MiB, at most the build's 2 GiB. Workers are made per cap.
 */
const wasmMemoryFor = (limits: SandboxLimits): number => Math.min(MAX_WASM_BYTES, (SCRIPTS_PER_WORKER_AT_ONCE + 1) * limits.memoryBytes + 16 * 1024 * 1024);
const MAX_WASM_BYTES = 2 * 1024 * 1024 * 1024 - 65536;
const WATCHDOG_EVERY_MS = 25;

/**
 * Runs `source` in a QuickJS runtime in a sandbox worker under `limits`; each `tools.<name>(args)` call of
 * the script runs `host` on this thread, with a signal aborted once the script has answered. A script whose
 * slice runs past its CPU limit (plus a grace) has its worker terminated and replaced.
 * docs/code-mode.md#the-sandbox
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
  /** Already started once, in a worker lost before the script made any tool call. */
  readonly rerun?: boolean;
}

interface Waiting {
  readonly job: Job;
  readonly resolve: (outcome: SandboxOutcome) => void;
}

interface Slot {
  readonly worker: Worker;
  /** False when the worker failed before it was ready. */
  readonly ready: Promise<boolean>;
  readonly wasmMemoryBytes: number;
  readonly meter: Int32Array;
  readonly epoch: number;
  /** The scripts it holds, by run id; a run stays until the worker says it is done (or the worker is gone). */
  readonly runs: Map<number, Run>;
  served: number;
  /** Takes no new script; terminated once it holds none. */
  retiring: boolean;
  gone: boolean;
  /** Ready for scripts (its engine compiled); a worker still starting is chosen only when no other has room. */
  isReady: boolean;
  /** A replacement is starting; this worker retires once it is ready. */
  replaced: boolean;
  /** Retires a worker past the pool's base size that has held no script for a while. */
  idle: NodeJS.Timeout | undefined;
}

const stopped = (stop: SandboxStop, limits: SandboxLimits, toolCalls = 0, message = stopMessage(stop, limits)): SandboxOutcome => ({ ok: false, stop, message, logs: [], logsTruncated: false, toolCalls });
const coolingDown = (limits: SandboxLimits, retryAfterMs: number): SandboxOutcome => ({ ok: false, stop: 'cooldown', message: stopMessage('cooldown', limits), logs: [], logsTruncated: false, toolCalls: 0, retryAfterMs });

class SandboxPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Waiting[] = [];
  private nextRun = 0;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly cooldowns = new HardStopCooldowns();

  run(job: Job): Promise<SandboxOutcome> {
    const cooldownMs = this.cooldowns.remaining(job.tenant);
    if (cooldownMs > 0) return Promise.resolve(coolingDown(job.limits, cooldownMs));
    // The first script starts the whole pool: no later script (another tenant's) waits for a worker to boot.
    if (this.slots.size === 0) for (let i = 0; i < SANDBOX_WORKERS; i++) this.spawn(wasmMemoryFor(job.limits));
    const queued = this.queue.reduce((count, entry) => count + (entry.job.tenant === job.tenant ? 1 : 0), 0);
    if (this.queue.length >= SANDBOX_QUEUE || queued >= SANDBOX_QUEUE_PER_TENANT) return Promise.resolve(stopped('busy', job.limits));
    return new Promise((resolve) => {
      this.queue.push({ job, resolve });
      this.pump();
    });
  }

  /** Scripts each tenant holds now, not counting those already told to go. */
  private held(): Map<string, number> {
    const held = new Map<string, number>();
    for (const slot of this.slots) for (const run of slot.runs.values()) if (!run.leaving) held.set(run.job.tenant, (held.get(run.job.tenant) ?? 0) + 1);
    return held;
  }

  private pump(): void {
    this.refuseCoolingDown();
    for (;;) {
      const held = this.held();
      // The oldest script whose tenant is under its share, among the tenants holding the fewest.
      const fewest = Math.min(...this.queue.map((entry) => held.get(entry.job.tenant) ?? 0));
      const index = this.queue.findIndex((entry) => (held.get(entry.job.tenant) ?? 0) === fewest && fewest < SANDBOX_SCRIPTS_PER_TENANT);
      const next = this.queue[index];
      if (!next) return;
      const slot = this.slotFor(next.job);
      if (!slot && this.cooldowns.suspect(next.job.tenant)) {
        // No worker of its own for a tenant that forced a stop: refused, never placed beside another's script.
        this.queue.splice(index, 1);
        next.resolve(stopped('busy', next.job.limits));
        continue;
      }
      if (!slot) {
        this.makeRoomFor(next.job.tenant, held);
        return;
      }
      this.queue.splice(index, 1);
      this.start(slot, next);
    }
  }

  /** Queued scripts (and scripts to run again) of a tenant cooling down are refused, not started. */
  private refuseCoolingDown(): void {
    for (let index = this.queue.length - 1; index >= 0; index--) {
      const { job, resolve } = this.queue[index]!;
      const cooldownMs = this.cooldowns.remaining(job.tenant);
      if (cooldownMs === 0) continue;
      this.queue.splice(index, 1);
      resolve(coolingDown(job.limits, cooldownMs));
    }
  }

  /**
   * A worker for a script: one with room and this script's memory cap, preferring one holding no other
   * tenant's script (a worker's scripts share its memory and its fate if it must be terminated; a tenant
   * whose scripts get a worker stopped waits for the replacement to start rather than join another's), then
   * a ready one, then one not computing now, then (for a tenant holding scripts already) its own idle worker
   * over an empty one, then the emptiest; a new worker while the pool has room. Tenants share a worker only
   * when `SANDBOX_WORKERS_MAX` workers all hold scripts, and never with a suspect (hard-stop-cooldown.ts).
   */
  private slotFor(job: Job): Slot | undefined {
    const cap = wasmMemoryFor(job.limits);
    const live = [...this.slots].filter((slot) => !slot.retiring);
    if (live.reduce((count, slot) => count + slot.runs.size, 0) >= SANDBOX_SCRIPTS) return undefined;
    let best: Slot | undefined;
    let bestScore = Infinity;
    const suspect = this.cooldowns.suspect(job.tenant);
    for (const slot of live) {
      if (slot.wasmMemoryBytes !== cap || slot.runs.size >= SCRIPTS_PER_WORKER_AT_ONCE) continue;
      const others = [...slot.runs.values()].filter((run) => run.job.tenant !== job.tenant);
      // A tenant that forced a stop shares no worker, either way.
      if (others.length > 0 && (suspect || others.some((run) => this.cooldowns.suspect(run.job.tenant)))) continue;
      const score = (others.length > 0 ? 20_000 : 0) + (slot.isReady ? 0 : 10_000) + (readSlice(slot.meter, slot.epoch) ? 100 : 0) + (slot.runs.size === 0 ? 50 : 0) + slot.runs.size;
      if (score < bestScore) [best, bestScore] = [slot, score];
    }
    if (best && (bestScore < 20_000 || live.length >= SANDBOX_WORKERS_MAX)) return best;
    if (live.length >= SANDBOX_WORKERS_MAX) {
      // Every worker is made for another memory cap: an empty one makes room.
      const empty = live.find((slot) => slot.runs.size === 0 && slot.wasmMemoryBytes !== cap);
      if (!empty) return undefined;
      this.retire(empty);
    }
    // Retiring workers wait for their scripts to end; at most as many as the pool's size linger.
    if (this.slots.size - live.length >= SANDBOX_WORKERS_MAX) return undefined;
    return this.spawn(cap);
  }

  /**
   * The pool is full: the tenant holding the most scripts, when that is more than `tenant` holds plus one,
   * gives up its newest script that is not computing now (it answers `busy`); the freed room goes to the
   * tenant holding fewer.
   */
  private makeRoomFor(tenant: string, held: Map<string, number>): void {
    // A script already told to go frees its room once its worker has stopped it: that room comes first.
    for (const slot of this.slots) for (const run of slot.runs.values()) if (run.leaving) return;
    const mine = held.get(tenant) ?? 0;
    let victim: Run | undefined;
    for (const slot of this.slots) {
      const computing = readSlice(slot.meter, slot.epoch)?.run;
      for (const [id, run] of slot.runs) {
        if (run.leaving || id === computing || (held.get(run.job.tenant) ?? 0) <= mine + 1) continue;
        const worse = !victim || (held.get(run.job.tenant) ?? 0) > (held.get(victim.job.tenant) ?? 0) || ((held.get(run.job.tenant) ?? 0) === (held.get(victim.job.tenant) ?? 0) && run.startedAt > victim.startedAt);
        if (worse) victim = run;
      }
    }
    victim?.leave('busy');
  }

  private spawn(wasmMemoryBytes: number): Slot {
    const meter = newSliceMeter();
    const epoch = performance.timeOrigin + performance.now();
    const workerData: WorkerData = { wasmMemoryBytes, meter, epoch };
    const worker = new Worker(WORKER_ENTRY, { ...WORKER_OPTIONS, workerData, resourceLimits: RESOURCE_LIMITS });
    // A worker must never keep the process alive, nor take it down.
    worker.unref();
    const ready = new Promise<boolean>((resolve) => {
      worker.once('message', (message: FromWorker) => resolve(message.type === 'ready'));
      worker.once('error', () => resolve(false));
      worker.once('exit', () => resolve(false));
    });
    const slot: Slot = { worker, ready, wasmMemoryBytes, meter: new Int32Array(meter), epoch, runs: new Map(), served: 0, retiring: false, gone: false, isReady: false, replaced: false, idle: undefined };
    void ready.then((isReady) => {
      slot.isReady = isReady;
      if (isReady) this.pump();
    });
    worker.on('error', () => undefined);
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'ready') return;
      const run = slot.runs.get(message.run);
      if (message.type === 'call') run?.call(message.call, message.name, message.argsJson);
      else if (run) {
        slot.runs.delete(message.run);
        run.done(message.outcome);
        if (!message.outcome.ok && message.outcome.stop === 'memory') this.retire(slot);
        this.settle(slot);
      }
    });
    // Out of V8 heap (resourceLimits) or any crash: the worker is gone, and every script it held.
    worker.once('exit', () => this.lose(slot, 'memory', 'worker_lost', true));
    this.slots.add(slot);
    return slot;
  }

  private start(slot: Slot, waiting: Waiting): void {
    const id = (this.nextRun = (this.nextRun % 0x7fffffff) + 1);
    slot.served += 1;
    const run = new Run(waiting.job, (message) => slot.worker.postMessage(message), id, waiting.resolve);
    slot.runs.set(id, run);
    clearTimeout(slot.idle);
    slot.idle = undefined;
    this.keepSpare(slot.wasmMemoryBytes);
    this.watch();
    if (slot.served >= SCRIPTS_PER_WORKER && !slot.replaced) {
      // Its replacement starts now and it keeps serving until that one is ready: no script waits for a worker to boot.
      slot.replaced = true;
      void this.spawn(slot.wasmMemoryBytes).ready.then(() => this.retire(slot));
    }
    void slot.ready.then((ready) => {
      if (!ready) return this.lose(slot, 'worker_lost', 'worker_lost');
      if (run.begin()) return;
      slot.runs.delete(id);
      this.settle(slot);
    });
  }

  /**
   * One empty worker kept ready while the pool may grow, so a tenant holding no script never waits for a
   * worker to start nor joins another tenant's.
   */
  private keepSpare(wasmMemoryBytes: number): void {
    const live = [...this.slots].filter((slot) => !slot.retiring);
    if (live.length < SANDBOX_WORKERS_MAX && !live.some((slot) => slot.runs.size === 0 && slot.wasmMemoryBytes === wasmMemoryBytes)) this.spawn(wasmMemoryBytes);
  }

  /** A script left the worker: a retiring worker with none left goes; the room goes to the queue. */
  private settle(slot: Slot): void {
    if (slot.retiring && slot.runs.size === 0) this.terminate(slot);
    else if (slot.runs.size === 0 && !slot.idle) {
      slot.idle = setTimeout(() => {
        slot.idle = undefined;
        const live = [...this.slots].filter((other) => !other.retiring);
        if (slot.runs.size === 0 && live.length > SANDBOX_WORKERS) this.retire(slot);
      }, IDLE_WORKER_MS);
      slot.idle.unref();
    }
    this.pump();
  }

  private retire(slot: Slot): void {
    slot.retiring = true;
    if (slot.runs.size === 0) this.terminate(slot);
  }

  private terminate(slot: Slot): void {
    if (slot.gone) return;
    slot.gone = true;
    clearTimeout(slot.idle);
    this.slots.delete(slot);
    void slot.worker.terminate();
  }

  /**
   * The worker is gone or must go: the script computing in it ends `stop`, every other one it held
   * `worker_lost`. When the computing script forced it (`forced`), its tenant starts a cooldown.
   */
  private lose(slot: Slot, stop: SandboxStop, others: SandboxStop = 'worker_lost', forced = false): void {
    // Terminated here already (its exit follows): nothing left to answer.
    if (slot.gone) return;
    const computing = readSlice(slot.meter, slot.epoch)?.run;
    this.terminate(slot);
    const runs = [...slot.runs];
    slot.runs.clear();
    const culprit = runs.find(([id]) => id === computing || runs.length === 1)?.[1];
    if (forced && culprit) this.cooldowns.strike(culprit.job.tenant);
    for (const [id, run] of runs) {
      const ended = id === computing || runs.length === 1 ? stop : others;
      // A script lost with its worker before it made any tool call has had no effect: it runs again, once.
      if (ended === 'worker_lost' && run.mayRunAgain()) this.queue.unshift({ job: { ...run.job, rerun: true }, resolve: run.handOver() });
      else run.lost(ended);
    }
    // A replacement starts now, so the next script does not wait for a worker to boot.
    if (slot.isReady && !slot.replaced && [...this.slots].filter((other) => !other.retiring).length < SANDBOX_WORKERS) this.spawn(slot.wasmMemoryBytes);
    this.pump();
  }

  /**
   * The main thread's own clock on every computing slice: inside one native operation no interrupt reaches
   * the engine's limit, so a slice whose script is past its CPU limit by the grace has its worker terminated.
   * CPU time counts whatever the script awaits meanwhile.
   */
  private watch(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => {
      // Nothing runs: the watchdog stops until a script starts.
      if (![...this.slots].some((slot) => slot.runs.size > 0)) {
        clearInterval(this.watchdog);
        this.watchdog = undefined;
        return;
      }
      for (const slot of [...this.slots]) {
        const slice = readSlice(slot.meter, slot.epoch);
        const run = slice && slot.runs.get(slice.run);
        if (run && slice.cpuMs > run.job.limits.cpuTimeMs + cpuGraceMs(run.job.limits)) this.lose(slot, 'cpu_time', 'worker_lost', true);
      }
    }, WATCHDOG_EVERY_MS);
    this.watchdog.unref();
  }
}

/**
 * One script in one worker, from the main thread: its wall deadline and cancel, its tool calls, its answer.
 * The answer may come before the worker is done with the script (its wall time passed, a cancel, eviction):
 * the script keeps its room in the worker until the worker says done.
 */
class Run {
  readonly startedAt = performance.now();
  /** Told to go (eviction, wall time, cancel): answered already or about to be, no longer counted as held. */
  leaving = false;
  private answered = false;
  private readonly inner = new AbortController();
  private toolCalls = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onCancel = (): void => this.leave('cancelled');

  constructor(
    readonly job: Job,
    private readonly post: (message: ToWorker) => void,
    private readonly id: number,
    private readonly resolve: (outcome: SandboxOutcome) => void,
  ) {}

  /**
   * Hands the script to the worker; false when it ends before (told to go while its worker was starting,
   * cancelled, or its wall time spent queueing).
   */
  begin(): boolean {
    if (this.leaving || this.answered) return false;
    const { limits, cancel } = this.job;
    const remaining = Math.floor(limits.wallTimeMs - (performance.now() - this.job.queuedAt));
    if (cancel?.aborted || remaining <= 0) {
      this.lost(cancel?.aborted ? 'cancelled' : 'wall_time');
      return false;
    }
    // The worker stops the script at its wall limit itself; this answers for it when the worker cannot.
    this.timer = setTimeout(() => this.leave('wall_time'), remaining + HARD_STOP_GRACE_MS);
    cancel?.addEventListener('abort', this.onCancel, { once: true });
    this.post({ type: 'run', run: this.id, source: this.job.source, limits: { ...limits, wallTimeMs: remaining } });
    return true;
  }

  call(call: number, name: string, argsJson: string): void {
    if (this.answered) return;
    this.toolCalls += 1;
    void this.job.host(name, argsJson, this.inner.signal).then((answer) => {
      if (!this.answered) this.post({ type: 'answer', run: this.id, call, answer });
    });
  }

  done(outcome: SandboxOutcome): void {
    // The worker was given the wall time left after queueing; the message names the script's limit.
    this.answer(!outcome.ok && outcome.stop === 'wall_time' ? { ...outcome, message: stopMessage('wall_time', this.job.limits) } : outcome);
  }

  lost(stop: SandboxStop): void {
    this.answer(stopped(stop, this.job.limits, this.toolCalls));
  }

  mayRunAgain(): boolean {
    return this.toolCalls === 0 && !this.answered && !this.leaving && this.job.rerun !== true;
  }

  /** Gives up the script without answering it: whoever runs it again answers through what this returns. */
  handOver(): (outcome: SandboxOutcome) => void {
    this.answered = true;
    clearTimeout(this.timer);
    this.job.cancel?.removeEventListener('abort', this.onCancel);
    return this.resolve;
  }

  /**
   * Asks the worker to stop the script. After a cancel the worker's own answer is awaited for a grace (it
   * carries what the script logged); past the wall limit and its grace, or evicted, the script answers now.
   */
  leave(stop: SandboxStop): void {
    if (this.leaving || this.answered) return;
    this.leaving = true;
    this.post({ type: 'cancel', run: this.id });
    clearTimeout(this.timer);
    if (stop === 'cancelled') this.timer = setTimeout(() => this.lost(stop), HARD_STOP_GRACE_MS);
    else this.lost(stop);
  }

  private answer(outcome: SandboxOutcome): void {
    if (this.answered) return;
    this.answered = true;
    clearTimeout(this.timer);
    this.job.cancel?.removeEventListener('abort', this.onCancel);
    this.inner.abort(new Error('script finished'));
    this.resolve(outcome);
  }
}

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
