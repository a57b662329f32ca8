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

/** Flush rounds before settling for less: lines that keep coming would otherwise keep a flush going. */
const MAX_FLUSH_ROUNDS = 16;

/**
 * Resolves once every line handed to `destination` before the call has been written (or after 16 flush
 * rounds that each still wrote something, while lines keep coming). SonicBoom's own `flush` calls back on
 * its 'drain', which it emits as soon as less than a batch (`minLength`) is left unwritten, not when
 * nothing is: lines that came while a write was in flight could still wait for the next batch, the periodic
 * flush or the exit flush. So this flushes again until one round writes nothing, counting the bytes of each
 * write through SonicBoom's documented 'write' event. The flush callback's error is not a verdict on the
 * lines: it carries fsync's answer, an error on pipes and terminals; a failing write writes nothing and
 * so ends the rounds too.
 */
export async function flushAll(destination: Destination): Promise<void> {
  for (let round = 0; round < MAX_FLUSH_ROUNDS; round += 1) {
    let written = 0;
    const count = (bytes: number): void => {
      written += bytes;
    };
    destination.on('write', count);
    try {
      await new Promise<void>((resolve) => destination.flush(() => resolve()));
    } finally {
      destination.off('write', count);
    }
    if (written === 0) return;
  }
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
