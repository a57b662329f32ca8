import type { Cancellation } from '../shared/cancellation.js';
import { ToolError } from '../call/tool-error.js';

/** The message of every call a shutdown ends (errorType TIMEOUT). */
export const SHUTTING_DOWN = 'gateway shutting down';

const noop = (): void => {};

type DrainState = 'serving' | 'draining' | 'closing' | 'cancelled';

/**
 * The replica's way out, in three steps: `begin` (readiness answers 503 so a load balancer stops
 * sending), `close` (new requests answer 503 + Retry-After; admitted ones go on), `cancel` (the grace is
 * over: every call still running is aborted and answered TIMEOUT "gateway shutting down", so each one
 * gets its answer and its audit event before the process exits).
 */
export class Drain {
  /**
   * The cancellation of every call still running (requests, approved calls). Held here rather than linked
   * through a listener on one shared shutdown signal: that signal would carry a listener per call in flight.
   */
  private readonly running = new Set<Cancellation>();
  private reason: ToolError | undefined;
  private state: DrainState = 'serving';

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
   * Makes `call` part of the shutdown: `cancel` aborts it (at once if that already happened). Returns the
   * release to call when the call is over.
   */
  track(call: Cancellation): () => void {
    if (this.reason) {
      call.abort(this.reason);
      return noop;
    }
    this.running.add(call);
    return () => void this.running.delete(call);
  }

  /**
   * Aborts every call still running, with a TIMEOUT ToolError. Handlers that honour their AbortSignal stop;
   * the timeout policy answers every attempt it bounds at once (also those whose handler ignores the
   * signal), and calls that would start now answer at once too.
   */
  cancel(): void {
    if (this.state === 'cancelled') return;
    this.state = 'cancelled';
    const reason = (this.reason = new ToolError('TIMEOUT', SHUTTING_DOWN));
    const running = [...this.running];
    this.running.clear();
    for (const call of running) call.abort(reason);
  }
}
