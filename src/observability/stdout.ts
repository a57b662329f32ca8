import { BatchedLineWriter, type BatchedLineWriterOptions } from './batched-line-writer.js';

/**
 * A destination writing JSON lines to `dest` (a file descriptor or a file path) in batches of one
 * event-loop turn, bounded: past `maxPendingChars` waiting, lines are dropped and counted.
 */
export function lineDestination(dest: number | string, options: Pick<BatchedLineWriterOptions, 'maxPendingChars'> = {}): BatchedLineWriter {
  return new BatchedLineWriter(dest, options);
}

let shared: BatchedLineWriter | undefined;

/**
 * The one destination of this process's stdout, shared by the JSON logs and the `stdout` audit sink, so
 * their lines never interleave mid-line. What still waits when the process exits is written then.
 */
export function stdoutDestination(): BatchedLineWriter {
  if (!shared) {
    const writer = lineDestination(1);
    process.once('exit', () => writer.flushSync());
    shared = writer;
  }
  return shared;
}

/** Lines lost on stdout (BatchedLineWriter.dropped; 0 until the destination exists). */
export function stdoutLinesDropped(): number {
  return shared?.dropped ?? 0;
}
