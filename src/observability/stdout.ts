import pino from 'pino';

type Destination = ReturnType<typeof pino.destination>;
let shared: Destination | undefined;

/**
 * The one writer of this process's stdout, shared by the JSON logs and the `stdout` audit sink: one
 * asynchronous, ordered buffer instead of a blocking write per line (stdout to a pipe or file is
 * synchronous in Node on Linux), and no two writers whose large writes could interleave mid-line.
 * pino flushes it synchronously when the process exits.
 */
export function stdoutDestination(): Destination {
  shared ??= pino.destination({ dest: 1, sync: false });
  return shared;
}
