import type { DeadlineAware } from '../pipeline/deps.js';
import type { AccessDecision, PolicyContext, ToolMode } from '../pipeline/types.js';
import type { Logger, Principal, Tool } from '../types.js';

/**
 * The context of one call. A class rather than object literals so every call's context has one shape
 * down the policy chain. Every field is an own field: a policy that hands on a context of its own
 * (`{ ...ctx, signal }`, as the timeout policy does for an attempt) keeps all of it.
 */
export class CallContext implements PolicyContext, DeadlineAware {
  constructor(
    readonly principal: Principal,
    readonly callId: string,
    readonly requestId: string,
    /** The caller's cancellation: client gone, batch cancelled or timed out, shutdown. */
    readonly signal: AbortSignal,
    readonly log: Logger,
    readonly depth: number,
    readonly mode: ToolMode,
    readonly checkAccess: (tool: Tool) => AccessDecision,
    readonly policyOptions: (policy: string) => unknown,
    readonly approval: PolicyContext['approval'],
    readonly deadline: number | undefined,
  ) {}
}
