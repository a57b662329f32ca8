import type { ErrorType, ToolSourceKind } from '../types.js';

/** One line of the audit log. Never carries raw arguments: only their canonical SHA-256. */
export interface AuditEvent {
  time: string;
  requestId: string;
  callId: string;
  tenant: string;
  user: string;
  tool: string;
  source: ToolSourceKind | null;
  argsSha256: string;
  outcome: 'ok' | 'pending_approval' | ErrorType;
  durationMs: number;
  approvalId: string | null;
}

export interface AuditSink {
  /** False for the `off` sink: the audit policy then skips hashing and building events altogether. */
  readonly enabled?: boolean;
  /** Never throws and never blocks the call; events are written in order. */
  write(event: AuditEvent): void;
  /** Resolves once every event written so far is on its medium. */
  flush(): Promise<void>;
  /** Flushes, then releases the medium. Events written afterwards are still appended (synchronously). */
  close(): Promise<void>;
}
