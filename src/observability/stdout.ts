import { LineWriter } from './line-writer.js';

let shared: LineWriter | undefined;

/**
 * The one writer of this process's stdout, shared by the JSON logs and the `stdout` audit sink: one
 * ordered buffer written once per event-loop turn instead of a write per line, and no two writers whose
 * large writes could interleave mid-line. What still waits is written when the process exits.
 */
export function stdoutDestination(): LineWriter {
  if (!shared) {
    const writer = new LineWriter(1);
    process.once('exit', () => writer.flushSync());
    shared = writer;
  }
  return shared;
}

/** Lines the stdout writer dropped because its reader fell too far behind (0 until it exists). */
export function stdoutLinesDropped(): number {
  return shared?.dropped ?? 0;
}
