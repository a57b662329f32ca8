import pino from 'pino';

type Destination = ReturnType<typeof pino.destination>;

/** Bytes that may wait unwritten; beyond it lines are dropped and counted (a stuck reader must not exhaust memory). */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** Lines wait until this many bytes are pending, so a busy gateway writes stdout in batches, not a syscall per line. */
const BATCH_BYTES = 4096;
/** …or until this long has passed, so a quiet gateway's lines still appear at once. */
const FLUSH_EVERY_MS = 50;

/**
 * A pino destination (SonicBoom) writing JSON lines to `dest` in the background: batched, bounded,
 * flushed by pino on process exit. `onDrop` hears each line dropped past `maxPendingBytes`.
 */
export function lineDestination(dest: number | string, options: { onDrop?: () => void; maxPendingBytes?: number } = {}): Destination {
  const maxLength = options.maxPendingBytes ?? MAX_PENDING_BYTES;
  const destination = pino.destination({ dest, sync: false, minLength: Math.min(BATCH_BYTES, maxLength - 1), maxLength, periodicFlush: FLUSH_EVERY_MS });
  if (options.onDrop) destination.on('drop', options.onDrop);
  // A failing log destination must not take the process down (pino already drops a closed pipe, EPIPE).
  destination.on('error', () => {});
  return destination;
}

let shared: Destination | undefined;
let dropped = 0;

/**
 * The one destination of this process's stdout, shared by the JSON logs and the `stdout` audit sink, so
 * their lines never interleave mid-line.
 */
export function stdoutDestination(): Destination {
  shared ??= lineDestination(1, { onDrop: () => (dropped += 1) });
  return shared;
}

/** Lines dropped on stdout because its reader fell too far behind. */
export function stdoutLinesDropped(): number {
  return dropped;
}
