import { appendFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { AuditEvent, AuditSink } from './types.js';

/**
 * JSONL file sink: `write` only queues; one writer drains the queue in order with a single append per
 * event-loop turn. `flush`/`close` wait for the drain, and a write after close is appended synchronously, so
 * no event is lost on shutdown.
 */
export function createFileAuditSink(path: string, options: { onError?: (error: unknown) => void } = {}): AuditSink {
  let queue: string[] = [];
  let handle: Promise<FileHandle> | undefined;
  let draining: Promise<void> = Promise.resolve();
  let scheduled = false;
  let closed = false;

  const drain = async (): Promise<void> => {
    scheduled = false;
    if (queue.length === 0) return;
    const lines = Buffer.from(queue.join(''));
    queue = [];
    try {
      handle ??= open(path, 'a');
      const file = await handle;
      // FileHandle.write, not appendFile: appendFile's writeFile machinery cost more than the write itself.
      for (let offset = 0; offset < lines.length; ) offset += (await file.write(lines, offset)).bytesWritten;
    } catch (error) {
      options.onError?.(error);
    }
  };
  // Drains once per event-loop turn, not per event: every call finishing in one turn shares one append.
  const schedule = (): Promise<void> => {
    if (!scheduled) {
      scheduled = true;
      const turn = new Promise<void>((resolve) => setImmediate(resolve));
      draining = Promise.all([draining, turn]).then(drain);
    }
    return draining;
  };

  return {
    write(event: AuditEvent) {
      const line = `${JSON.stringify(event)}\n`;
      if (closed) {
        appendFileSync(path, line);
        return;
      }
      queue.push(line);
      void schedule();
    },
    async flush() {
      await schedule();
    },
    async close() {
      if (closed) return;
      await schedule();
      closed = true;
      if (handle) await (await handle).close();
    },
  };
}
