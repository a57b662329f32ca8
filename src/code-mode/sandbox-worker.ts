// A sandbox worker (docs/code-mode.md#the-sandbox): runs scripts with the engine, off the gateway's event
// loop. It holds several scripts at once, each in its own QuickJS runtime, and computes one at a time: a
// script waiting for a tool call holds only its runtime, so the worker runs the others meanwhile. Every
// tool call goes to the main thread as a message and its answer comes back as one; only strings and plain
// records cross. The worker marks each computing slice in a shared array, so the main thread can stop a
// slice that runs past its script's CPU limit (a native operation no interrupt reaches).
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine, runInThisThread, type HostAnswer } from './engine.js';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './limits.js';
import { markSlice } from './slice-meter.js';

export type ToWorker =
  | { readonly type: 'run'; readonly run: number; readonly source: string; readonly limits: SandboxLimits }
  | { readonly type: 'answer'; readonly run: number; readonly call: number; readonly answer: HostAnswer }
  | { readonly type: 'cancel'; readonly run: number };

export interface WorkerData {
  /** The cap on this worker's WebAssembly memory (sandbox.ts sizes it from the scripts' memory limit). */
  readonly wasmMemoryBytes: number;
  /** The slice meter, shared with the main thread (slice-meter.ts). */
  readonly meter: SharedArrayBuffer;
  /** The epoch (ms) the meter's times count from. */
  readonly epoch: number;
}

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'call'; readonly run: number; readonly call: number; readonly name: string; readonly argsJson: string }
  | { readonly type: 'done'; readonly run: number; readonly outcome: import('./engine.js').SandboxOutcome };

const port = parentPort;
if (port) {
  const { wasmMemoryBytes, meter: buffer, epoch } = workerData as WorkerData;
  const meter = new Int32Array(buffer);
  const post = (message: FromWorker): void => port.postMessage(message);
  const runs = new Map<number, { waiting: Map<number, (answer: HostAnswer) => void>; cancel: AbortController }>();
  let calls = 0;
  port.on('message', (message: ToWorker) => {
    if (message.type === 'answer') {
      const waiting = runs.get(message.run)?.waiting;
      waiting?.get(message.call)?.(message.answer);
      waiting?.delete(message.call);
    } else if (message.type === 'cancel') runs.get(message.run)?.cancel.abort();
    else {
      const { run } = message;
      const own = { waiting: new Map<number, (answer: HostAnswer) => void>(), cancel: new AbortController() };
      runs.set(run, own);
      void runInThisThread(
        message.source,
        (name, argsJson) =>
          new Promise<HostAnswer>((resolve) => {
            calls += 1;
            own.waiting.set(calls, resolve);
            post({ type: 'call', run, call: calls, name, argsJson });
          }),
        message.limits,
        own.cancel.signal,
        (cpuUsedMs, computing) => markSlice(meter, epoch, run, cpuUsedMs, computing),
      ).then((outcome) => {
        runs.delete(run);
        post({ type: 'done', run, outcome });
      });
    }
  });
  // The engine is compiled, and one trivial script run outside any slice, before the worker takes a script: its
  // start is not the script's time. WebAssembly compiles a function on its first call, so a worker's first script
  // paid for compiling the engine's code inside its first slice: on a machine busy starting a whole test run, a
  // `return 1 + 1` ran past its CPU limit there and was stopped by force (two CI runs, commit 148ef5e's message).
  void loadEngine(wasmMemoryBytes)
    .then(() => runInThisThread('return 1 + 1', () => Promise.reject(new Error('no tool calls while warming up')), DEFAULT_SANDBOX_LIMITS))
    .then(
      () => post({ type: 'ready' }),
      () => post({ type: 'ready' }),
    );
}
