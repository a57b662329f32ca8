import type { Writable } from 'node:stream';
import type { AuditConfig } from '../config/types.js';
import { createFileAuditSink } from './file-sink.js';
import type { AuditEvent, AuditSink } from './types.js';

/** One JSON line per event on a stream (stdout by default); the stream's own buffering keeps order. */
export function createStreamAuditSink(stream: Writable = process.stdout): AuditSink {
  return {
    write(event: AuditEvent) {
      stream.write(`${JSON.stringify(event)}\n`);
    },
    async flush() {
      // A write callback fires after everything queued before it is handed to the OS.
      await new Promise<void>((resolve) => stream.write('', () => resolve()));
    },
    async close() {
      await this.flush();
    },
  };
}

export function createOffAuditSink(): AuditSink {
  return { enabled: false, write() {}, async flush() {}, async close() {} };
}

/** The sink named by `audit.sink` in config (`path` already absolute). */
export function createAuditSink(config: AuditConfig, options: { onError?: (error: unknown) => void } = {}): AuditSink {
  if (config.sink === 'file') return createFileAuditSink(config.path, options);
  if (config.sink === 'stdout') return createStreamAuditSink();
  return createOffAuditSink();
}
