import { write as fsWrite, writeSync as fsWriteSync } from 'node:fs';

type WriteCallback = (error: NodeJS.ErrnoException | null, written: number) => void;

export interface LineWriterOptions {
  /** Characters that may wait unwritten; beyond it lines are dropped and counted (a stuck reader must not exhaust memory). */
  maxPendingChars?: number;
  /** Retry delay when a non-blocking pipe is full. */
  retryMs?: number;
  /** fs.write / fs.writeSync (tests inject partial writes and EAGAIN). */
  write?: (fd: number, buffer: Buffer, offset: number, length: number, position: null, callback: WriteCallback) => void;
  writeSync?: (fd: number, buffer: Buffer, offset: number) => number;
}

/**
 * An asynchronous, ordered writer of text lines to a file descriptor: stdout, shared by the JSON logs
 * and the `stdout` audit sink. At most one write is in flight; lines written meanwhile wait in an array
 * and leave together in the next write, joined once.
 *
 * Why not pino's SonicBoom: it appends each line to one growing string and measures that string's UTF-8
 * length on every write, which flattens (copies) it. The cost of a line then grows with the backlog:
 * about 4 KB allocated per request under load, and 10 KB and ~30 µs per line once 16 KB wait.
 */
export class LineWriter {
  private pending: string[] = [];
  private pendingChars = 0;
  private writing = false;
  private waiters: Array<{ batch: number; callback: (error?: Error) => void }> = [];
  private failed: Error | undefined;
  /** Batches taken from `pending` so far and batches fully written: a flush waits for its own batch only. */
  private taken = 0;
  private finished = 0;
  private droppedLines = 0;
  private readonly maxPendingChars: number;
  private readonly retryMs: number;
  private readonly fsWrite: NonNullable<LineWriterOptions['write']>;
  private readonly fsWriteSync: NonNullable<LineWriterOptions['writeSync']>;

  constructor(
    private readonly fd: number,
    options: LineWriterOptions = {},
  ) {
    this.maxPendingChars = options.maxPendingChars ?? 64 * 1024 * 1024;
    this.retryMs = options.retryMs ?? 10;
    this.fsWrite = options.write ?? fsWrite;
    this.fsWriteSync = options.writeSync ?? fsWriteSync;
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
    if (!this.writing) {
      this.writing = true;
      this.writeChunk(this.take(), 0);
    }
    return true;
  }

  /** Calls back once every line written before it has been handed to the kernel (or failed). */
  flush(callback: (error?: Error) => void): void {
    const batch = this.pending.length > 0 ? this.taken + 1 : this.taken;
    if (batch <= this.finished) return callback(this.failed);
    this.waiters.push({ batch, callback });
  }

  /**
   * Writes the lines still waiting, synchronously (process exit). A chunk already handed to the thread
   * pool is not written twice; a pipe that stays full for a second is given up rather than hang the exit.
   * Known limit: when the reader of a pipe has fallen behind, the chunk in flight is blocked in the thread
   * pool, and nothing here can wait for it; it is then lost at exit, or lands after the lines written here.
   * Graceful shutdown does not meet this (it waits for `flush` before exiting).
   */
  flushSync(): void {
    if (this.pending.length === 0) return;
    const chunk = this.drain();
    const giveUpAt = Date.now() + 1000;
    let offset = 0;
    while (offset < chunk.length) {
      try {
        offset += this.fsWriteSync(this.fd, chunk, offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > giveUpAt) break;
      }
    }
    // Those lines are out: flushes that waited for them now wait only for the chunk in flight, if any.
    for (const waiter of this.waiters) waiter.batch = Math.min(waiter.batch, this.taken);
    this.release();
  }

  /** The next batch for the write in flight. */
  private take(): Buffer {
    this.taken += 1;
    return this.drain();
  }

  /** Every waiting line, joined once, and the backlog emptied. */
  private drain(): Buffer {
    const lines = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    return Buffer.from(lines.length === 1 ? lines[0]! : lines.join(''));
  }

  private writeChunk(chunk: Buffer, offset: number): void {
    this.fsWrite(this.fd, chunk, offset, chunk.length - offset, null, (error, written) => {
      if (error) {
        // A full non-blocking pipe: try again shortly. Anything else drops this chunk (a log writer must
        // not take the process down) and reaches the flush callbacks.
        if (error.code === 'EAGAIN') return void setTimeout(() => this.writeChunk(chunk, offset), this.retryMs);
        this.failed = error;
      } else if (offset + written < chunk.length) {
        return this.writeChunk(chunk, offset + written);
      }
      this.finished += 1;
      if (this.waiters.length > 0) this.release();
      if (this.pending.length > 0) this.writeChunk(this.take(), 0);
      else this.writing = false;
    });
  }

  private release(): void {
    const due = this.waiters.filter((waiter) => waiter.batch <= this.finished);
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.batch > this.finished);
    for (const waiter of due) waiter.callback(this.failed);
  }
}
