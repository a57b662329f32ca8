import { writeSync as fsWriteSync } from 'node:fs';

export interface LineWriterOptions {
  /** Characters that may wait unwritten; beyond it lines are dropped and counted (a stuck reader must not exhaust memory). */
  maxPendingChars?: number;
  /** Retry delay when a non-blocking pipe is full. */
  retryMs?: number;
  /** fs.writeSync (tests inject short writes, EAGAIN and failures): bytes written from `offset`. */
  writeSync?: (fd: number, buffer: Buffer, offset: number) => number;
}

/**
 * An ordered writer of text lines to a file descriptor: stdout, shared by the JSON logs and the `stdout`
 * audit sink. Lines written during one event-loop turn wait in an array and leave together, joined once,
 * in one synchronous write at the end of the turn (setImmediate): one syscall per turn, not per line.
 *
 * Why synchronous: nothing is ever in flight elsewhere, so the exit flush knows exactly what is out. With
 * writes in the thread pool, a batch still in flight at `process.exit` could not be waited for; behind a
 * slow pipe reader it was lost or landed after the lines the exit flush wrote (seen in CI). The cost is
 * Node's own for stdout on files and pipes: a reader that stops reading a blocking pipe holds the
 * process. A non-blocking descriptor that is full (EAGAIN) is retried shortly instead, and lines beyond
 * `maxPendingChars` are dropped and counted.
 *
 * Why not pino's SonicBoom: it appends each line to one growing string and measures that string's UTF-8
 * length on every write, which flattens (copies) it: about 4 KB allocated per request under load.
 */
export class LineWriter {
  private pending: string[] = [];
  private pendingChars = 0;
  /** What a short write or a full pipe left of the batch being written; always goes out first. */
  private rest: Buffer | undefined;
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private waiters: Array<(error?: Error) => void> = [];
  private failed: Error | undefined;
  private droppedLines = 0;
  private readonly maxPendingChars: number;
  private readonly retryMs: number;
  private readonly fsWriteSync: NonNullable<LineWriterOptions['writeSync']>;

  constructor(
    private readonly fd: number,
    options: LineWriterOptions = {},
  ) {
    this.maxPendingChars = options.maxPendingChars ?? 64 * 1024 * 1024;
    this.retryMs = options.retryMs ?? 10;
    this.fsWriteSync = options.writeSync ?? ((fd, buffer, offset) => fsWriteSync(fd, buffer, offset));
  }

  /** Lines dropped because the reader fell `maxPendingChars` behind. */
  get dropped(): number {
    return this.droppedLines;
  }

  write(line: string): boolean {
    if (this.pendingChars + line.length > this.maxPendingChars) {
      this.droppedLines += 1;
      return false;
    }
    this.pending.push(line);
    this.pendingChars += line.length;
    this.schedule();
    return true;
  }

  /** Calls back once every line written before it has been handed to the kernel (or failed). */
  flush(callback: (error?: Error) => void): void {
    if (this.pending.length === 0 && !this.rest) return callback(this.failed);
    this.waiters.push(callback);
    this.schedule();
  }

  /** Writes everything still waiting, now (process exit); a pipe that stays full for a second is given up rather than hang the exit. */
  flushSync(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const giveUpAt = Date.now() + 1000;
    while (this.writeOut() && Date.now() <= giveUpAt);
    this.release();
  }

  private schedule(): void {
    if (this.scheduled || this.retryTimer) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  /** Writes what waits; a full non-blocking pipe is tried again after `retryMs`. */
  private drain(): void {
    if (!this.writeOut()) return this.release();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.drain();
    }, this.retryMs);
  }

  /**
   * One attempt to write the rest and then the lines waiting. Returns true when the descriptor is full
   * (EAGAIN: try again later), false when everything is out or failed. A failure drops that batch (a log
   * writer must not take the process down) and reaches the flush callbacks.
   */
  private writeOut(): boolean {
    for (;;) {
      if (!this.rest) {
        if (this.pending.length === 0) return false;
        const lines = this.pending;
        this.pending = [];
        this.pendingChars = 0;
        this.rest = Buffer.from(lines.length === 1 ? lines[0]! : lines.join(''));
      }
      const chunk = this.rest;
      let offset = 0;
      try {
        while (offset < chunk.length) offset += this.fsWriteSync(this.fd, chunk, offset);
        this.rest = undefined;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.rest = chunk.subarray(offset);
          return true;
        }
        this.failed = error as Error;
        this.rest = undefined;
      }
    }
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter(this.failed);
  }
}
