import { LazyAbort } from '../execution/lazy-abort.js';
import { ToolError } from '../execution/tool-error.js';
import type { DeadlineQueue } from '../pipeline/deadline-queue.js';

/** The message of every call a shutdown ends (errorType TIMEOUT). */
export const SHUTTING_DOWN = 'gateway shutting down';

type DrainState = 'serving' | 'draining' | 'closing' | 'cancelled';

/**
 * The replica's way out, in three steps: `begin` (readiness answers 503 so a load balancer stops
 * sending), `close` (new requests answer 503 + Retry-After; admitted ones go on), `cancel` (the grace is
 * over: every call still running is aborted and answered TIMEOUT "gateway shutting down", so each one
 * gets its answer and its audit event before the process exits).
 */
export class Drain {
  /**
   * The parent of every call's cancellation (request aborts, approved calls). Lazy: a call links to it only
   * when it reads its signal, and one not linked sees the abort as soon as it looks.
   */
  readonly calls = new LazyAbort();
  private state: DrainState = 'serving';

  constructor(private readonly deadlines: DeadlineQueue) {}

  /** Readiness is 503 from the start of the drain. */
  get draining(): boolean {
    return this.state !== 'serving';
  }

  /** New requests are refused (503 + Retry-After). */
  get refusing(): boolean {
    return this.state === 'closing' || this.state === 'cancelled';
  }

  /** Calls may no longer start. */
  get cancelled(): boolean {
    return this.state === 'cancelled';
  }

  begin(): void {
    if (this.state === 'serving') this.state = 'draining';
  }

  close(): void {
    if (this.state === 'serving' || this.state === 'draining') this.state = 'closing';
  }

  /**
   * Aborts every call still running. Handlers that honour their AbortSignal stop; the timeout policy
   * answers every attempt it bounds at once (also those whose handler ignores the signal), and calls
   * that would start now answer at once too.
   */
  cancel(): void {
    if (this.state === 'cancelled') return;
    this.state = 'cancelled';
    const reason = new ToolError('TIMEOUT', SHUTTING_DOWN);
    this.calls.abort(reason);
    this.deadlines.expireAll(reason);
  }
}
