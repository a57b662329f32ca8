import type { ApprovalService } from '../approvals/types.js';
import type { AuditSink } from '../audit/types.js';
import type { OnStoreUnavailable } from '../config/types.js';
import type { StateStore } from '../store/types.js';
import type { CircuitRegistry } from './circuit-state.js';
import type { PolicyMetrics } from './metrics.js';

/** Time, injectable so backoff and breakers are testable without waiting. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

/** What the built-in policies need from the server; created once per process and shared by every tenant's chain. */
export interface PolicyDeps {
  store: StateStore;
  approvals: ApprovalService;
  audit: AuditSink;
  metrics?: PolicyMetrics;
  /** Shared across tenants so a failing upstream opens one breaker; each chain makes its own when absent. */
  circuits?: CircuitRegistry;
  clock?: Clock;
  /** Rate limits while the store does not answer (store.onUnavailable); default fail-closed. */
  onStoreUnavailable?: OnStoreUnavailable;
}

export const systemClock: Clock = {
  now: Date.now,
  random: Math.random,
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** A per-call deadline (epoch ms), set by the batch runner; timeout and retry never run past it. */
export interface DeadlineAware {
  readonly deadline?: number;
}

export function deadlineOf(ctx: object): number | undefined {
  const deadline = (ctx as DeadlineAware).deadline;
  return typeof deadline === 'number' && Number.isFinite(deadline) ? deadline : undefined;
}
