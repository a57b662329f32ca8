import type { AuditConfig } from '../config/types.js';
import { stdoutDestination } from '../observability/stdout.js';
import { createFileAuditSink } from './file-sink.js';
import { auditLine } from './line.js';
import type { AuditEvent, AuditSink } from './types.js';

/** Where JSON lines go without waiting: the process's shared stdout destination (src/observability/stdout.ts). */
export interface LineDestination {
  write(line: string): unknown;
  /** Resolves once every line written so far is out. */
  flush(): Promise<void>;
}

/** One JSON line per event on a shared line destination: the default sink, on stdout beside the logs. */
export function createDestinationAuditSink(destination: LineDestination): AuditSink {
  return {
    write(event: AuditEvent) {
      destination.write(auditLine(event));
    },
    flush() {
      return destination.flush();
    },
    async close() {
      await this.flush();
    },
  };
}

function createOffAuditSink(): AuditSink {
  return { enabled: false, write() {}, async flush() {}, async close() {} };
}

/** The sink named by `audit.sink` in config (`path` already absolute). */
export function createAuditSink(config: AuditConfig, options: { onError?: (error: unknown) => void } = {}): AuditSink {
  if (config.sink === 'file') return createFileAuditSink(config.path, options);
  if (config.sink === 'stdout') return createDestinationAuditSink(stdoutDestination());
  return createOffAuditSink();
}
