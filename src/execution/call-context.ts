import type { DeadlineAware } from '../pipeline/deps.js';
import type { AccessDecision, PolicyContext, ToolMode } from '../pipeline/types.js';
import type { Logger, Principal, Tool } from '../types.js';
import { LazyAbort, onSignalAbort } from './lazy-abort.js';

/**
 * The context of one call, and of each timed attempt of it. A class rather than object literals: every
 * context shares one hidden class and `signal` is a getter on the prototype, so reads of context fields
 * stay monomorphic down the policy chain and no accessor is allocated per call (both showed under load).
 * `signal` is not an own property: a policy that hands on a context of its own must carry `signal` over.
 */
export class CallContext implements PolicyContext, DeadlineAware {
  constructor(
    readonly principal: Principal,
    readonly callId: string,
    readonly requestId: string,
    /** The caller's cancellation, or the attempt's own (timeout); a LazyAbort makes its signal on first read. */
    readonly abortSource: AbortSignal | LazyAbort,
    readonly log: Logger,
    readonly depth: number,
    readonly mode: ToolMode,
    readonly checkAccess: (tool: Tool) => AccessDecision,
    readonly policyOptions: (policy: string) => unknown,
    readonly approval: PolicyContext['approval'],
    readonly deadline: number | undefined,
  ) {}

  get signal(): AbortSignal {
    const source = this.abortSource;
    return source instanceof LazyAbort ? source.signal : source;
  }

  /** Follows this call's cancellation without creating an AbortSignal (see ToolContext.onAbort). */
  onAbort(listener: (reason: unknown) => void): () => void {
    const source = this.abortSource;
    return source instanceof LazyAbort ? source.onAbort(listener) : onSignalAbort(source, listener);
  }

  /** The same call with another abort source: one attempt under a timeout. */
  withAbort(abortSource: AbortSignal | LazyAbort): CallContext {
    return new CallContext(
      this.principal,
      this.callId,
      this.requestId,
      abortSource,
      this.log,
      this.depth,
      this.mode,
      this.checkAccess,
      this.policyOptions,
      this.approval,
      this.deadline,
    );
  }
}

/** Anything that reports a cancellation: a ToolContext (onAbort and signal), a LazyAbort (onAbort). */
export interface AbortFollower {
  onAbort(listener: (reason: unknown) => void): () => void;
  readonly signal?: AbortSignal;
}

/**
 * Follows a call's cancellation through `onAbort`, or through its `signal` when a custom policy handed on
 * a rebuilt context (an object spread keeps own fields only, and `onAbort` lives on CallContext's prototype).
 */
export function followCancellation(source: AbortFollower, listener: (reason: unknown) => void): () => void {
  if (typeof source.onAbort === 'function') return source.onAbort(listener);
  return source.signal ? onSignalAbort(source.signal, listener) : () => {};
}

/**
 * True once the call's own caller cancelled it (client gone, batch or shutdown), as opposed to a policy
 * inside the chain (the timeout aborts only its attempt). Reads a LazyAbort without creating its signal.
 */
export function callerCancelled(ctx: { readonly signal: AbortSignal }): boolean {
  return ctx instanceof CallContext ? ctx.abortSource.aborted : ctx.signal.aborted;
}

/** The constructor's eleven fields: a CallContext with more was added to (by a custom policy) and is copied whole. */
const OWN_FIELDS = 11;

/** True for a CallContext carrying only its own fields, which withAbort can re-create exactly. */
export function isPlainCallContext(ctx: object): ctx is CallContext {
  if (!(ctx instanceof CallContext)) return false;
  // Counted with for-in rather than Object.keys: this runs on every timed call, and Object.keys builds an
  // array each time. CallContext's prototype has no enumerable members, so for-in sees the own fields; an
  // enumerable field added anywhere only makes the context count as extended (copied whole), never plain.
  let fields = 0;
  for (const _key in ctx) fields += 1;
  return fields === OWN_FIELDS;
}
