import { appendFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { auditLine } from './line.js';
import type { AuditEvent, AuditSink } from './types.js';

export interface FileAuditSinkOptions {
  onError?: (error: unknown) => void;
  /** Longest an event waits in memory before it is appended (default 50 ms). */
  flushIntervalMs?: number;
  /** Queued bytes that trigger an append at once, before the interval is up (default 64 KiB). */
  flushBytes?: number;
}

/**
 * JSONL file sink: `write` only queues; one writer drains the queue in order. An append happens when
 * 64 KiB are queued or 50 ms after the oldest queued event, whichever comes first. Every append is a
 * round trip through libuv's thread pool (futex wake-ups and context switches on the core serving
 * requests), so appends are batched rather than made once per event-loop turn. `flush`/`close`
 * drain at once, and a write after close is appended synchronously, so no event is lost on shutdown.
 * A crash (not a shutdown) can lose at most the last interval's events.
 */
export function createFileAuditSink(path: string, options: FileAuditSinkOptions = {}): AuditSink {
  const intervalMs = options.flushIntervalMs ?? 50;
  const flushBytes = options.flushBytes ?? 64 * 1024;
  let queue: string[] = [];
  let queuedBytes = 0;
  let handle: Promise<FileHandle> | undefined;
  let draining: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const append = async (lines: Buffer): Promise<void> => {
    try {
      handle ??= open(path, 'a');
      const file = await handle;
      // FileHandle.write, not appendFile: appendFile's writeFile machinery cost more than the write itself.
      for (let offset = 0; offset < lines.length; ) offset += (await file.write(lines, offset)).bytesWritten;
    } catch (error) {
      // A file that could not be opened is opened again on the next append (and close has none to close).
      if (handle && !(await handle.then(() => true, () => false))) handle = undefined;
      options.onError?.(error);
    }
  };
  // Takes what is queued now and appends it after every earlier append (order is the file's order).
  const drain = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (queue.length > 0) {
      const lines = Buffer.from(queue.join(''));
      queue = [];
      queuedBytes = 0;
      draining = draining.then(() => append(lines));
    }
    return draining;
  };

  return {
    write(event: AuditEvent) {
      const line = auditLine(event);
      if (closed) {
        appendFileSync(path, line);
        return;
      }
      queue.push(line);
      queuedBytes += line.length;
      if (queuedBytes >= flushBytes) void drain();
      // Not unref'd: a queued event keeps the process alive until it is on disk.
      else timer ??= setTimeout(drain, intervalMs);
    },
    async flush() {
      await drain();
    },
    async close() {
      if (closed) return;
      await drain();
      closed = true;
      if (handle) await (await handle).close();
    },
  };
}
