import { BatchedLineWriter } from './batched-line-writer.js';

let shared: BatchedLineWriter | undefined;

/**
 * The one destination of this process's stdout, shared by the JSON logs and the `stdout` audit sink, so
 * their lines never interleave mid-line. What still waits when the process exits is written then.
 */
export function stdoutDestination(): BatchedLineWriter {
  if (!shared) {
    const writer = new BatchedLineWriter(1);
    process.once('exit', () => writer.flushSync());
    shared = writer;
  }
  return shared;
}

/** Lines lost on stdout (BatchedLineWriter.dropped; 0 until the destination exists). */
export function stdoutLinesDropped(): number {
  return shared?.dropped ?? 0;
}
