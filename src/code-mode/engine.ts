import { performance } from 'node:perf_hooks';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSDeferredPromise, type QuickJSHandle, type QuickJSRuntime, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import type { SandboxLimits } from './limits.js';

/**
 * What a host tool call answers the script: a JSON text the promise resolves to, or one it rejects with.
 * Values cross the boundary only as JSON text, so the script never holds a host object.
 */
export type HostAnswer = { readonly resolve: string } | { readonly reject: string };

/** Runs one `tools.<name>(args)` call of the script; must not reject. */
export type HostCall = (name: string, argsJson: string, signal: AbortSignal) => Promise<HostAnswer>;

export type SandboxStop = 'cpu_time' | 'wall_time' | 'tool_calls' | 'memory' | 'stack' | 'result_size' | 'script_error' | 'never_settles' | 'cancelled' | 'busy' | 'worker_lost' | 'cooldown';

export type SandboxOutcome =
  | { readonly ok: true; readonly resultJson: string; readonly logs: readonly string[]; readonly logsTruncated: boolean; readonly toolCalls: number }
  | {
      readonly ok: false;
      readonly stop: SandboxStop;
      readonly message: string;
      readonly logs: readonly string[];
      readonly logsTruncated: boolean;
      readonly toolCalls: number;
      /** When trying again makes sense (a tenant's cooldown). */
      readonly retryAfterMs?: number;
    };

// One WebAssembly module per thread (a sandbox worker); each script gets its own runtime (heap, limits) in it.
let engine: Promise<QuickJSWASMModule> | undefined;

/**
 * Loads the engine once for this thread. `maxBytes` caps its WebAssembly memory: past it an allocation
 * fails inside QuickJS (out of memory) instead of growing the memory, so even an allocation inside one
 * native call that no interrupt stops is bounded. docs/code-mode.md#limits
 */
export function loadEngine(maxBytes?: number): Promise<QuickJSWASMModule> {
  const variant = syncVariant();
  const memory = maxBytes === undefined ? undefined : new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: Math.min(MAX_PAGES, Math.max(INITIAL_PAGES, Math.ceil(maxBytes / WASM_PAGE))) });
  return (engine ??= newQuickJSWASMModuleFromVariant(memory ? newVariant(variant, { wasmMemory: memory }) : variant));
}
const WASM_PAGE = 65536;
/** The release build's own initial memory (16 MiB); a memory given to it must start at least this large. */
const INITIAL_PAGES = (16 * 1024 * 1024) / WASM_PAGE;
/** The build's declared maximum (2 GiB): a larger memory does not link. */
const MAX_PAGES = 32768;

// The package's types describe its CommonJS build (`module.exports.default`); its ESM build, which Node
// loads here, exports the variant as the default itself.
function syncVariant(): QuickJSSyncVariant {
  const loaded: unknown = releaseSync;
  return isVariant(loaded) ? loaded : (releaseSync as { default: QuickJSSyncVariant }).default;
}
const isVariant = (value: unknown): value is QuickJSSyncVariant => typeof value === 'object' && value !== null && 'type' in value;

/**
 * Installed before the script runs, from inside the sandbox: `tools` (a proxy whose every property is an
 * async function over the host's one `call`), `console.log` over the host's `log`, and the `serialize`
 * the result is read with — all captured now, so a script that replaces `JSON` or `Promise` later harms
 * only itself. The host functions are parameters, never globals.
 */
const PRELUDE = `(call, log) => {
  const stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze;
  const fail = (text) => { const info = parse(text); const error = new Error(info.message); error.name = 'ToolCallError'; error.errorType = info.errorType; error.tool = info.tool; error.callId = info.callId; throw error; };
  const tools = new Proxy(freeze(Object.create(null)), {
    get: (_, name) => typeof name === 'string' ? (args) => call(name, stringify(args === undefined ? {} : args)).then(parse, fail) : undefined,
  });
  const show = (value) => { if (typeof value === 'string') return value; try { const text = stringify(value); return text === undefined ? String(value) : text; } catch { return String(value); } };
  Object.defineProperty(globalThis, 'tools', { value: tools, enumerable: true });
  Object.defineProperty(globalThis, 'console', { value: freeze({ log: (...values) => log(values.map(show).join(' ')) }), enumerable: false });
  return (value) => { const text = stringify(value); return text === undefined ? 'null' : text; };
}`;

interface RunState {
  /** False while the gateway's own prelude runs: only the script's time counts against its limits. */
  metering: boolean;
  cpuUsed: number;
  /** CPU time (ms) of the last heap walk. */
  lastMemoryCheck: number;
  sliceStart: number;
  wallDeadline: number;
  stop: SandboxStop | undefined;
  toolCalls: number;
  logBytes: number;
  logs: string[];
  logsTruncated: boolean;
  readonly onSlice: SliceListener | undefined;
  readonly heapBytes: () => number;
  readonly memoryBytes: number;
}

/** Told when a slice of the script starts (with the CPU time it used before) and when it ends. */
export type SliceListener = (cpuUsedMs: number, computing: boolean) => void;

/**
 * Runs `source` (plain JavaScript: the body of an async function, so `await` and `return` work) in a fresh
 * QuickJS runtime under `limits`, on the calling thread: the gateway calls it only inside a sandbox worker
 * (sandbox.ts). Nothing but `tools` and `console.log` reaches the host; no timers, modules, network or
 * file system exist in the sandbox. docs/code-mode.md#the-sandbox
 */
export async function runInThisThread(source: string, host: HostCall, limits: SandboxLimits, cancel?: AbortSignal, onSlice?: SliceListener): Promise<SandboxOutcome> {
  const quickjs = await loadEngine();
  const runtime = quickjs.newRuntime();
  const state: RunState = {
    metering: false,
    cpuUsed: 0,
    lastMemoryCheck: 0,
    sliceStart: 0,
    wallDeadline: performance.now() + limits.wallTimeMs,
    stop: undefined,
    toolCalls: 0,
    logBytes: 0,
    logs: [],
    logsTruncated: false,
    onSlice,
    heapBytes: () => heapBytes(runtime),
    memoryBytes: limits.memoryBytes,
  };
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  // Called every few thousand instructions: a clock read, and now and then a walk of the heap.
  runtime.setInterruptHandler(() => {
    if (state.stop !== undefined) return true;
    if (!state.metering) return false;
    const now = performance.now();
    const cpu = state.cpuUsed + (now - state.sliceStart);
    if (cpu > limits.cpuTimeMs) state.stop = 'cpu_time';
    else if (now > state.wallDeadline) state.stop = 'wall_time';
    else if (cpu - state.lastMemoryCheck > MEMORY_CHECK_EVERY_MS) {
      state.lastMemoryCheck = cpu;
      if (heapBytes(runtime) > limits.memoryBytes) state.stop = 'memory';
    }
    return state.stop !== undefined;
  });
  const context = runtime.newContext();
  const inner = new AbortController();
  const pending = new Set<QuickJSDeferredPromise>();
  const settled: Array<() => void> = [];
  let wake: (() => void) | undefined;
  const onCancel = (): void => {
    state.stop ??= 'cancelled';
    wake?.();
  };
  cancel?.addEventListener('abort', onCancel, { once: true });
  try {
    const serialize = install(context, state, limits, host, inner.signal, pending, settled, () => wake?.());
    if (!serialize.ok) return failure(state, 'script_error', serialize.message);
    state.metering = true;
    const started = slice(state, () => context.evalCode(`(async () => {\n${source}\n})()`, 'script.js'));
    if (started.error) return failure(state, stopOf(state, context, started.error), describe(context, started.error));
    const promise = started.value;
    try {
      for (;;) {
        const drained = slice(state, () => runtime.executePendingJobs());
        if (drained.error) return failure(state, stopOf(state, context, drained.error), describe(context, drained.error));
        drained.dispose();
        if (state.stop !== undefined) return failure(state, state.stop, stopMessage(state.stop, limits));
        const promiseState = context.getPromiseState(promise);
        if (promiseState.type === 'fulfilled') {
          const value = promiseState.value;
          try {
            return finish(context, state, limits, serialize.handle, value);
          } finally {
            value.dispose();
          }
        }
        if (promiseState.type === 'rejected') {
          const stop = stopOf(state, context, promiseState.error);
          return failure(state, stop, describe(context, promiseState.error));
        }
        if (settled.length === 0 && pending.size === 0) return failure(state, 'never_settles', 'the script awaits a promise that nothing will settle (there are no timers or events in the sandbox)');
        if (settled.length === 0) await waitForWork(state, (resume) => (wake = resume));
        wake = undefined;
        // Settling runs sandbox code (the promise's reactions are queued, but a thenable's getter is not): metered too.
        for (const apply of settled.splice(0)) slice(state, apply);
      }
    } finally {
      promise.dispose();
      serialize.handle.dispose();
    }
  } finally {
    cancel?.removeEventListener('abort', onCancel);
    inner.abort(new Error('script finished'));
    for (const deferred of pending) deferred.dispose();
    context.dispose();
    runtime.dispose();
  }
}

/**
 * The release build's allocator cannot tell QuickJS the size of a block it frees or grows, so its own
 * memory limit (setMemoryLimit) refuses only single allocations above it: an array grown element by element
 * is not counted. The heap walk behind dumpMemoryUsage counts it; it runs after every this much of the script's CPU time
 * (and is printed into a host string, so it allocates nothing in the sandbox). docs/code-mode.md#limits
 */
const MEMORY_CHECK_EVERY_MS = 10;
/** CPU time since the last walk after which the end of a slice walks the heap. */
const SLICE_END_CHECK_MS = 5;
const MEMORY_USED = /^memory used\s+\d+\s+(\d+)/m;

function heapBytes(runtime: QuickJSRuntime): number {
  const match = MEMORY_USED.exec(runtime.dumpMemoryUsage());
  return match ? Number(match[1]) : 0;
}

/** Waits until a tool call settles, the wall deadline passes or the run is cancelled. */
function waitForWork(state: RunState, setWake: (resume: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      state.stop ??= 'wall_time';
      resolve();
    }, Math.max(0, state.wallDeadline - performance.now()));
    setWake(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

type Installed = { ok: true; handle: QuickJSHandle } | { ok: false; message: string };

function install(
  context: QuickJSContext,
  state: RunState,
  limits: SandboxLimits,
  host: HostCall,
  signal: AbortSignal,
  pending: Set<QuickJSDeferredPromise>,
  settled: Array<() => void>,
  wake: () => void,
): Installed {
  const call = context.newFunction('call', (nameHandle, argsHandle) => {
    if (context.typeof(nameHandle) !== 'string' || context.typeof(argsHandle) !== 'string') return { error: context.newError({ name: 'TypeError', message: 'tools.<name>(args): args must be JSON' }) };
    if (state.toolCalls >= limits.maxToolCalls) {
      // A hard stop, not a catchable error: a script looping over a refusal would only burn its CPU time.
      state.stop = 'tool_calls';
      return { error: context.newError({ name: 'RangeError', message: stopMessage('tool_calls', limits) }) };
    }
    state.toolCalls += 1;
    // Lengths first: an oversized name or argument text is refused before it is copied out of the sandbox.
    if (lengthOf(context, nameHandle) > MAX_NAME_CHARS) return refused(context, { errorType: 'UNKNOWN_TOOL', message: 'unknown tool', tool: '', callId: '' });
    const name = context.getString(nameHandle);
    if (lengthOf(context, argsHandle) > limits.maxArgumentBytes) return refused(context, { errorType: 'VALIDATION_ERROR', message: argumentsTooLarge(name, limits), tool: name, callId: '' });
    const args = context.getString(argsHandle);
    const deferred = context.newPromise();
    pending.add(deferred);
    void host(name, args, signal).then((answer) => {
      settled.push(() => {
        if (!deferred.alive) return;
        const text = context.newString('resolve' in answer ? answer.resolve : answer.reject);
        if ('resolve' in answer) deferred.resolve(text);
        else deferred.reject(text);
        text.dispose();
        pending.delete(deferred);
        deferred.dispose();
      });
      wake();
    });
    return deferred.handle.dup();
  });
  const log = context.newFunction('log', (textHandle) => {
    if (state.logsTruncated) return;
    const text = context.typeof(textHandle) === 'string' ? context.getString(textHandle) : '';
    const bytes = Buffer.byteLength(text) + 1;
    if (state.logBytes + bytes > limits.maxLogBytes) {
      state.logsTruncated = true;
      return;
    }
    state.logBytes += bytes;
    state.logs.push(text);
  });
  try {
    const prelude = context.evalCode(PRELUDE, 'prelude.js');
    if (prelude.error) return { ok: false, message: describe(context, prelude.error) };
    const installed = context.callFunction(prelude.value, context.undefined, call, log);
    prelude.value.dispose();
    if (installed.error) return { ok: false, message: describe(context, installed.error) };
    return { ok: true, handle: installed.value };
  } finally {
    call.dispose();
    log.dispose();
  }
}

/** Longer than any tool name (64 characters): such a name is unknown whatever it says. */
const MAX_NAME_CHARS = 256;

function lengthOf(context: QuickJSContext, text: QuickJSHandle): number {
  const handle = context.getProp(text, 'length');
  try {
    return context.getNumber(handle);
  } finally {
    handle.dispose();
  }
}

/** A promise already rejected with a ToolCallError's JSON, as a failed host call would reject. */
function refused(context: QuickJSContext, failure: { errorType: string; message: string; tool: string; callId: string }): QuickJSHandle {
  const deferred = context.newPromise();
  const text = context.newString(JSON.stringify(failure));
  deferred.reject(text);
  text.dispose();
  const handle = deferred.handle.dup();
  deferred.dispose();
  return handle;
}

export function argumentsTooLarge(name: string, limits: SandboxLimits): string {
  return `${name} arguments are larger than ${limits.maxArgumentBytes} bytes of JSON (the gateway's request body limit)`;
}

/** Runs synchronous sandbox work as one CPU slice (the interrupt handler measures from its start). */
function slice<T>(state: RunState, run: () => T): T {
  state.onSlice?.(state.cpuUsed, true);
  state.sliceStart = performance.now();
  try {
    return run();
  } finally {
    // Other scripts share this worker's memory and run between this script's slices: a heap past its limit
    // (grown inside one native call, between two walks) ends the script before any of them runs. A walk
    // costs milliseconds on a large heap, so it is skipped after a slice too short to grow one by much
    // (the worker's memory cap has a script's limit of slack); the walk is the script's time too.
    const cpu = state.cpuUsed + (performance.now() - state.sliceStart);
    if (state.stop === undefined && cpu - state.lastMemoryCheck >= SLICE_END_CHECK_MS) {
      state.lastMemoryCheck = cpu;
      if (state.heapBytes() > state.memoryBytes) state.stop = 'memory';
    }
    state.cpuUsed += performance.now() - state.sliceStart;
    state.onSlice?.(state.cpuUsed, false);
  }
}

function finish(context: QuickJSContext, state: RunState, limits: SandboxLimits, serialize: QuickJSHandle, value: QuickJSHandle): SandboxOutcome {
  const text = slice(state, () => context.callFunction(serialize, context.undefined, value));
  if (text.error) return failure(state, stopOf(state, context, text.error), `the return value is not JSON: ${describe(context, text.error)}`);
  try {
    const lengthHandle = context.getProp(text.value, 'length');
    const length = context.getNumber(lengthHandle);
    lengthHandle.dispose();
    // A JSON text is UTF-16 in the sandbox: more than maxResultBytes code units is over the limit in any encoding.
    if (length > limits.maxResultBytes) return failure(state, 'result_size', stopMessage('result_size', limits));
    const resultJson = context.getString(text.value);
    if (Buffer.byteLength(resultJson) > limits.maxResultBytes) return failure(state, 'result_size', stopMessage('result_size', limits));
    return { ok: true, resultJson, logs: state.logs, logsTruncated: state.logsTruncated, toolCalls: state.toolCalls };
  } finally {
    text.value.dispose();
  }
}

function failure(state: RunState, stop: SandboxStop, message: string): SandboxOutcome {
  return { ok: false, stop, message, logs: state.logs, logsTruncated: state.logsTruncated, toolCalls: state.toolCalls };
}

/** Why the script ended with `error`: a limit the host set, or the script's own exception. */
function stopOf(state: RunState, context: QuickJSContext, error: QuickJSHandle): SandboxStop {
  if (state.stop !== undefined) return state.stop;
  const text = describe(context, error, false);
  if (/out of memory/i.test(text)) return 'memory';
  if (/stack overflow/i.test(text)) return 'stack';
  return 'script_error';
}

const MAX_ERROR_CHARS = 1000;

/** `Name: message` of a thrown value, bounded; disposes the handle unless told to keep it. */
function describe(context: QuickJSContext, error: QuickJSHandle, dispose = true): string {
  try {
    const name = context.getProp(error, 'name');
    const message = context.getProp(error, 'message');
    const text = context.typeof(message) === 'string' ? `${context.typeof(name) === 'string' ? context.getString(name) : 'Error'}: ${context.getString(message)}` : 'the script threw a value that is not an Error';
    name.dispose();
    message.dispose();
    return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
  } catch {
    return 'the script failed';
  } finally {
    if (dispose && error.alive) error.dispose();
  }
}

export function stopMessage(stop: SandboxStop, limits: SandboxLimits): string {
  switch (stop) {
    case 'cpu_time':
      return `the script ran longer than its CPU time limit (${limits.cpuTimeMs} ms)`;
    case 'wall_time':
      return `the script did not finish within its wall time limit (${limits.wallTimeMs} ms)`;
    case 'tool_calls':
      return `the script made more than ${limits.maxToolCalls} tool calls`;
    case 'memory':
      return `the script used more than its memory limit (${limits.memoryBytes} bytes)`;
    case 'stack':
      return `the script recursed deeper than its stack limit (${limits.stackBytes} bytes)`;
    case 'result_size':
      return `the script's return value is larger than ${limits.maxResultBytes} bytes of JSON`;
    case 'cancelled':
      return 'the call was cancelled';
    case 'busy':
      return 'the gateway is running as many scripts as it can and its queue is full; try again shortly';
    case 'worker_lost':
      return 'the sandbox worker running the script was stopped; run the script again';
    case 'cooldown':
      return "this tenant's scripts are paused: one of them had to be stopped by force (it ran past its CPU or memory limit inside one operation); try again later";
    case 'never_settles':
    case 'script_error':
      return 'the script failed';
  }
}
