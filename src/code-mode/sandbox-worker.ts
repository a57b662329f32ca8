// A sandbox worker (docs/code-mode.md#the-sandbox): runs one script at a time with the engine, off the
// gateway's event loop. Every tool call goes to the main thread as a message and its answer comes back as
// one; only strings and plain records cross.
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine, runInThisThread, type HostAnswer } from './engine.js';
import type { SandboxLimits } from './limits.js';

export type ToWorker =
  | { readonly type: 'run'; readonly source: string; readonly limits: SandboxLimits }
  | { readonly type: 'answer'; readonly call: number; readonly answer: HostAnswer }
  | { readonly type: 'cancel' };

export interface WorkerData {
  /** The cap on this worker's WebAssembly memory (sandbox.ts sizes it from the scripts' memory limit). */
  readonly wasmMemoryBytes: number;
}

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'call'; readonly call: number; readonly name: string; readonly argsJson: string }
  | { readonly type: 'done'; readonly outcome: import('./engine.js').SandboxOutcome };

const port = parentPort;
if (port) {
  const post = (message: FromWorker): void => port.postMessage(message);
  const waiting = new Map<number, (answer: HostAnswer) => void>();
  let cancel: AbortController | undefined;
  let calls = 0;
  port.on('message', (message: ToWorker) => {
    if (message.type === 'answer') {
      waiting.get(message.call)?.(message.answer);
      waiting.delete(message.call);
    } else if (message.type === 'cancel') cancel?.abort();
    else {
      cancel = new AbortController();
      void runInThisThread(
        message.source,
        (name, argsJson) =>
          new Promise<HostAnswer>((resolve) => {
            calls += 1;
            waiting.set(calls, resolve);
            post({ type: 'call', call: calls, name, argsJson });
          }),
        message.limits,
        cancel.signal,
      ).then((outcome) => {
        waiting.clear();
        post({ type: 'done', outcome });
      });
    }
  });
  // The engine is compiled before the worker takes a script: its start is not the script's time.
  void loadEngine((workerData as WorkerData).wasmMemoryBytes).then(() => post({ type: 'ready' }));
}
