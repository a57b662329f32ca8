import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';

export interface ShutdownTiming {
  /** From the signal on: how long running calls may go on before they are cancelled and answered. */
  graceMs: number;
  /** From the signal on: how long readiness says 503 while the listener still serves, before it closes. */
  drainDelayMs: number;
}

/**
 * After cancelling, the calls still have to be answered, audited and flushed: the hard stop (the
 * process exits whatever is left) comes this long after the grace.
 */
export const ANSWER_MARGIN_MS = 5_000;

const IDLE_SWEEP_MS = 100;

/**
 * The graceful way out (SIGTERM/SIGINT): readiness turns 503 at once; after `drainDelayMs` the listener
 * closes and new requests answer 503 + Retry-After; at the end of the grace every call still running is
 * cancelled and answered (TIMEOUT "gateway shutting down") and audited; then upstreams close and the
 * audit log is flushed (onClose hooks).
 */
export async function shutDownGracefully(app: FastifyInstance, { graceMs, drainDelayMs }: ShutdownTiming): Promise<void> {
  const cancel = setTimeout(() => {
    app.log.warn({ graceMs }, 'shutdown grace is over: cancelling and answering the calls still running');
    app.drain.cancel();
  }, graceMs);
  // close() ends only the keep-alive sockets idle at that moment; one whose last response ends later
  // without `Connection: close` (a hijacked reply, such as /mcp's) would hold the process until the hard stop.
  let sweep: NodeJS.Timeout | undefined;
  try {
    app.drain.begin();
    if (drainDelayMs > 0) await sleep(Math.min(drainDelayMs, graceMs));
    sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
    await app.close();
  } finally {
    clearTimeout(cancel);
    clearInterval(sweep);
  }
}
