import { LineWriter } from './line-writer.js';

let shared: LineWriter | undefined;

/**
 * The one writer of this process's stdout, shared by the JSON logs and the `stdout` audit sink: one
 * asynchronous, ordered buffer instead of a blocking write per line (stdout to a pipe or file is
 * synchronous in Node on Linux), and no two writers whose large writes could interleave mid-line.
 * What still waits is written synchronously when the process exits.
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
