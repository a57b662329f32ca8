import type { DeadlineAware } from './deadline.js';
import type { AccessDecision, Logger, PolicyContext, Principal, ProgressUpdate, ScriptOrigin, Tool, ToolMode } from '../types.js';
import type { Pool } from '../registry/pool.js';
import { LazySignal } from './lazy-signal.js';

/**
 * The context of one call, and of each timed attempt of it. A class rather than object literals so every
 * call's context has one shape down the policy chain. `signal` is a getter on the prototype, so a call whose
 * handler never reads it never creates an AbortSignal (lazy-signal.ts): a policy that hands on a context of
 * its own (an object spread keeps own fields only) must set `signal` on it.
 */
export class CallContext implements PolicyContext, DeadlineAware {
  constructor(
    readonly principal: Principal,
    readonly callId: string,
    readonly requestId: string,
    /** The caller's cancellation (client gone, batch, shutdown), or an attempt's own under the timeout policy. */
    readonly cancellation: AbortSignal | LazySignal,
    readonly log: Logger,
    readonly depth: number,
    readonly mode: ToolMode,
    readonly checkAccess: (tool: Tool) => AccessDecision,
    readonly policyOptions: (policy: string) => unknown,
    readonly approval: PolicyContext['approval'],
    readonly deadline: number | undefined,
    readonly onProgress?: ((update: ProgressUpdate) => void) | undefined,
    readonly script?: ScriptOrigin | undefined,
    /** The pool the call was resolved in (tool_search searches it, src/registry/tool-search.ts). */
    readonly pool?: Pool | undefined,
  ) {}

  get signal(): AbortSignal {
    const cancellation = this.cancellation;
    return cancellation instanceof LazySignal ? cancellation.signal : cancellation;
  }

  /** The same call under another cancellation: one attempt under a timeout. */
  withCancellation(cancellation: AbortSignal | LazySignal): CallContext {
    return new CallContext(
      this.principal,
      this.callId,
      this.requestId,
      cancellation,
      this.log,
      this.depth,
      this.mode,
      this.checkAccess,
      this.policyOptions,
      this.approval,
      this.deadline,
      this.onProgress,
      this.script,
      this.pool,
    );
  }
}

/**
 * Calls `listener` once when the call's cancellation aborts (at once if it has); returns how to stop. A
 * CallContext's LazySignal is followed through a callback, so following it creates no AbortSignal.
 */
export function followCall(ctx: PolicyContext, listener: (reason: unknown) => void): () => void {
  const source = ctx instanceof CallContext ? ctx.cancellation : ctx.signal;
  if (source instanceof LazySignal) return source.follow(listener);
  if (source.aborted) {
    listener(source.reason);
    return () => {};
  }
  const forward = (): void => listener(source.reason);
  source.addEventListener('abort', forward, { once: true });
  return () => source.removeEventListener('abort', forward);
}
