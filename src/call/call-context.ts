import type { DeadlineAware } from './deadline.js';
import type { AccessDecision, Logger, PolicyContext, ProgressUpdate, ScriptOrigin, Tool, ToolMode } from './types.js';
import type { Principal } from './principal.js';
import type { Cancellation } from '../shared/cancellation.js';

/**
 * The context of one call, and of each timed attempt of it. A class rather than object literals so every
 * call's context has one shape down the policy chain. `signal` is a getter on the prototype, so a call whose
 * handler never reads it never creates an AbortSignal (src/shared/cancellation.ts). A context is derived only with
 * `deriveContext`: an object spread keeps own fields only and would drop `signal`.
 */
export class CallContext implements PolicyContext, DeadlineAware {
  constructor(
    readonly principal: Principal,
    readonly callId: string,
    readonly requestId: string,
    /** The caller's cancellation (client gone, batch, shutdown), or an attempt's own under the timeout policy. */
    readonly cancellation: Cancellation,
    readonly log: Logger,
    readonly depth: number,
    readonly mode: ToolMode,
    readonly checkAccess: (tool: Tool) => AccessDecision,
    readonly approval: PolicyContext['approval'],
    readonly deadline: number | undefined,
    readonly onProgress?: ((update: ProgressUpdate) => void) | undefined,
    readonly script?: ScriptOrigin | undefined,
    /**
     * The pool the call was resolved in (src/registry/pool.ts): tool_search searches it (src/registry/tool-search.ts,
     * `PoolContext`). Opaque here so the call contract does not depend on the registry.
     */
    readonly pool?: object | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }
}

/** What a derived context changes; everything else is the parent's. */
export interface ContextChange {
  /** The child's own cancellation, e.g. one timed attempt (it should follow the parent's). */
  cancellation?: Cancellation;
  /** An earlier deadline (epoch ms); a later one than the parent's is ignored. */
  deadline?: number;
}

/**
 * The one way to derive a call's context. `parent` may be the chain's CallContext or any object with the
 * PolicyContext fields — a custom policy's `{ ...ctx, … }` included, which keeps `cancellation` but not the
 * `signal` getter: the result is a CallContext either way, so the call keeps its cancellation (and a
 * hand-built context's extra fields).
 */
export function deriveContext(parent: PolicyContext, change: ContextChange = {}): CallContext {
  const inherited = (parent as DeadlineAware).deadline;
  const deadline = inherited === undefined || change.deadline === undefined ? (inherited ?? change.deadline) : Math.min(inherited, change.deadline);
  const derived = new CallContext(
    parent.principal,
    parent.callId,
    parent.requestId,
    change.cancellation ?? parent.cancellation,
    parent.log,
    parent.depth,
    parent.mode,
    parent.checkAccess,
    parent.approval,
    deadline,
    parent.onProgress,
    parent.script,
    // A spread context keeps `pool` as an own field: tool_search below still searches the call's pool.
    (parent as { pool?: object }).pool,
  );
  if (parent instanceof CallContext && !carriesExtra.has(parent)) return derived;
  // A context built by hand (a custom policy's) may carry fields of its own for the layers below: they go along,
  // also to each context derived from this one.
  let carried = false;
  for (const [key, value] of Object.entries(parent)) {
    if (key in derived) continue;
    Reflect.set(derived, key, value);
    carried = true;
  }
  if (carried) carriesExtra.add(derived);
  return derived;
}

/** The derived contexts holding a hand-built context's extra fields (rare: only behind a custom policy). */
const carriesExtra = new WeakSet<CallContext>();
