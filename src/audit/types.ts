import type { ErrorType, ToolSourceKind } from '../types.js';

/** A call's outcome: `ok`, `pending_approval`, or its errorType. */
export type CallOutcome = 'ok' | 'pending_approval' | ErrorType;

/**
 * One tool call, whatever answered it: the policy chain, or a refusal before it (UNKNOWN_TOOL at
 * resolution, PERMISSION_DENIED outside the pool, VALIDATION_ERROR). Never carries raw arguments: only
 * their canonical SHA-256 (null when they were not a JSON object).
 */
export interface CallAuditEvent {
  event: 'call';
  /** When the call started, epoch ms (as the log lines' `time`). */
  time: number;
  requestId: string;
  callId: string;
  tenant: string;
  user: string;
  /** The resolved tool's name, or the name as the caller sent it (bounded, see boundedName). */
  tool: string;
  source: ToolSourceKind | null;
  argsSha256: string | null;
  outcome: CallOutcome;
  errorType: ErrorType | null;
  durationMs: number;
  approvalId: string | null;
  /** The call's OpenTelemetry trace id, present only while tracing is on (joins the event to its trace). */
  traceId?: string;
}

/**
 * One approval decision (approve or deny), refused attempts included. An approval runs the call: its
 * outcome is the run's (the run writes no call event of its own, so a decision is one line).
 */
export interface ApprovalAuditEvent {
  event: 'approval';
  time: number;
  requestId: string;
  tenant: string;
  /** Who decided (or tried to). */
  user: string;
  decision: 'approve' | 'deny';
  approvalId: string;
  /** Known once the record was found and the decider may see it. */
  requester: string | null;
  tool: string | null;
  callId: string | null;
  source: ToolSourceKind | null;
  /** The approved run's outcome, `APPROVAL_DENIED` for a denial, `refused` when the decision was not taken. */
  outcome: CallOutcome | 'refused';
  /** The errorType of the outcome, or the request-level code (`TG_CONFLICT`, …) of a refused decision. */
  errorType: string | null;
  durationMs: number;
}

/** One line of the audit log. */
export type AuditEvent = CallAuditEvent | ApprovalAuditEvent;

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
