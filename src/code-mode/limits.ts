import { SANDBOX_DEFAULTS } from '../config/schema.js';

/**
 * The bounds of one `run_script` (docs/code-mode.md#limits). QuickJS runs synchronously in a sandbox
 * worker, so `cpuTimeMs` — the script's own running time, summed over every slice between tool calls — is
 * what frees the worker for other scripts; `wallTimeMs` also counts the time spent waiting for tools.
 */
export interface SandboxLimits {
  /** Whole run, tool calls included. */
  readonly wallTimeMs: number;
  /** Time the script itself runs (its worker serves nothing else meanwhile). */
  readonly cpuTimeMs: number;
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly maxToolCalls: number;
  /** Inner calls in flight at once (concurrency-safe ones; an unsafe call always runs alone). */
  readonly maxParallel: number;
  /** The JSON of the return value. */
  readonly maxResultBytes: number;
  /** Everything `console.log` wrote; beyond it lines are dropped and the answer says so. */
  readonly maxLogBytes: number;
  /**
   * The JSON of one inner call's arguments: the gateway's `server.bodyLimit`, as for a request body. Measured
   * inside the sandbox before the text is copied out, so an oversized call never reaches the main thread.
   */
  readonly maxArgumentBytes: number;
}

/** `server.bodyLimit`'s default. */
const BODY_LIMIT_DEFAULT = 1024 * 1024;

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { ...SANDBOX_DEFAULTS, maxArgumentBytes: BODY_LIMIT_DEFAULT };
