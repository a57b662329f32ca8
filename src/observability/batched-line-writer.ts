import { closeSync, openSync, writeSync as fsWriteSync } from 'node:fs';

export interface BatchedLineWriterOptions {
  /** Characters that may wait unwritten; beyond it lines are dropped and counted (a stuck reader must not exhaust memory). */
  maxPendingChars?: number;
  /** Retry delay when a non-blocking pipe is full (EAGAIN). */
  retryMs?: number;
  /** Longest a line waits before its batch is written (ms). */
  maxDelayMs?: number;
  /** fs.writeSync (tests inject short writes, EAGAIN and failures): bytes written from `offset`. */
  writeSync?: (fd: number, buffer: Buffer, offset: number) => number;
}

/** How long an exit flush keeps trying a full pipe before giving the rest up rather than hang the exit. */
const EXIT_FLUSH_GIVE_UP_MS = 1000;

/**
 * An ordered writer of text lines (a pino destination) to a file descriptor or a file: stdout, shared by
 * the JSON logs and the `stdout` audit sink. Lines wait in an array and leave together, joined once, in one
 * synchronous write `maxDelayMs` after the first of them (a flush writes at once).
 *
 * Why a delay and not the end of the event-loop turn: a write after every turn that logged (setImmediate)
 * is a system call per turn, and a pending immediate makes the next poll return at once instead of waiting
 * for more sockets, so under load the loop turns more often, each with fewer requests: the per-turn write
 * costs the hot path more than batches of up to 20 ms do (bench/results.md).
 *
 * Why not pino's own destination (SonicBoom): it appends every line to one growing string and measures
 * that string's UTF-8 length on each write, which copies it, and its writes run in the thread pool. It
 * allocated and cost more per request on the hot-path benchmark (bench/results.md).
 *
 * Why synchronous: nothing is ever in flight elsewhere, so an exit flush knows exactly what is out. A batch
 * still in the thread pool at `process.exit` cannot be waited for, and behind a slow pipe reader it is lost
 * or lands after the lines the exit flush writes. The cost is Node's own for stdout on files and pipes: a
 * reader that stops reading a blocking pipe holds the process. A non-blocking descriptor that is full
 * (EAGAIN) is retried after `retryMs` instead, and lines beyond `maxPendingChars` are dropped and counted.
 */
export class BatchedLineWriter {
  private pending: string[] = [];
  private pendingChars = 0;
  /** What a short write or a full pipe left of the batch being written; always goes out first. */
  private rest: Buffer | undefined;
  /** How many lines `rest` holds (some perhaps in part). */
  private restLines = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private waiters: Array<() => void> = [];
  private droppedLines = 0;
  private readonly ownsFd: boolean;
  private readonly fd: number;
  private readonly maxPendingChars: number;
  private readonly retryMs: number;
  private readonly maxDelayMs: number;
  private readonly fsWriteSync: NonNullable<BatchedLineWriterOptions['writeSync']>;

  /** `dest`: a file descriptor (1 for stdout), or a path opened for appending. */
  constructor(dest: number | string, options: BatchedLineWriterOptions = {}) {
    this.ownsFd = typeof dest === 'string';
    this.fd = typeof dest === 'string' ? openSync(dest, 'a') : dest;
    this.maxPendingChars = options.maxPendingChars ?? 64 * 1024 * 1024;
    this.retryMs = options.retryMs ?? 10;
    this.maxDelayMs = options.maxDelayMs ?? 20;
    this.fsWriteSync = options.writeSync ?? ((fd, buffer, offset) => fsWriteSync(fd, buffer, offset));
  }

  /**
   * Lines lost: dropped because the reader fell `maxPendingChars` behind, in a batch whose write failed,
   * or given up by an exit flush behind a pipe that stayed full.
   */
  get dropped(): number {
    return this.droppedLines;
  }

  /** Queues one line (with its newline); false when it was dropped. */
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

  /** Resolves once every line written before the call has been handed to the kernel, or has failed. */
  flush(): Promise<void> {
    if (this.pending.length === 0 && !this.rest) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      // Now rather than after the delay; behind a full pipe the retry timer already owns the batch.
      if (!this.retryTimer) this.writeNow();
    });
  }

  /** Writes everything still waiting, now (process exit); a pipe that stays full for a second is given up. */
  flushSync(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const giveUpAt = Date.now() + EXIT_FLUSH_GIVE_UP_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (this.writeOut() && Date.now() <= giveUpAt) Atomics.wait(pause, 0, 0, 1);
    if (this.rest || this.pending.length > 0) this.discard();
    this.release();
  }

  /** Flushes what waits and closes a file this writer opened. */
  close(): void {
    this.flushSync();
    if (this.ownsFd) closeSync(this.fd);
  }

  private schedule(): void {
    // A batch is already due; behind a full pipe the retry timer writes everything waiting, this line included.
    if (this.flushTimer || this.retryTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.drain();
    }, this.maxDelayMs);
    // Never holds the process open by itself: what still waits at exit goes out through flushSync.
    this.flushTimer.unref();
  }

  private writeNow(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.drain();
  }

  /** Writes what waits; a full non-blocking pipe is tried again after `retryMs`. */
  private drain(): void {
    if (!this.writeOut()) return this.release();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.drain();
    }, this.retryMs);
    // Never holds the process open by itself: what still waits at exit goes out through flushSync.
    this.retryTimer.unref();
  }

  /**
   * One attempt to write the rest and then the lines waiting. Returns true when the descriptor is full
   * (EAGAIN: try again later), false when everything is out or failed. A failure drops that batch (a log
   * writer must not take the process down) and counts its lines.
   */
  private writeOut(): boolean {
    for (;;) {
      if (!this.rest) {
        if (this.pending.length === 0) return false;
        const lines = this.pending;
        this.pending = [];
        this.pendingChars = 0;
        this.rest = Buffer.from(lines.length === 1 ? lines[0]! : lines.join(''));
        this.restLines = lines.length;
      }
      const chunk = this.rest;
      let offset = 0;
      try {
        while (offset < chunk.length) offset += this.fsWriteSync(this.fd, chunk, offset);
        this.rest = undefined;
      } catch (error) {
        if (error instanceof Error && 'code' in error && error.code === 'EAGAIN') {
          this.rest = chunk.subarray(offset);
          return true;
        }
        this.droppedLines += this.restLines;
        this.rest = undefined;
      }
    }
  }

  /** Counts what an exit flush had to give up as dropped. */
  private discard(): void {
    this.droppedLines += this.pending.length + (this.rest ? this.restLines : 0);
    this.pending = [];
    this.pendingChars = 0;
    this.rest = undefined;
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
