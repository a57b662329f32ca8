import type { Task } from '@modelcontextprotocol/server';
import type { ToolResult } from '../call/types.js';
import { DomainError, type ErrorCode } from '../errors.js';

export type TaskStatus = Task['status'];

/** Who a task belongs to: its key is made of these, so nobody else's lookup of its id can find it. */
export interface TaskOwner {
  tenant: string;
  user: string;
}

/** One task as the state store keeps it (JSON). */
export interface TaskRecord {
  id: string;
  status: TaskStatus;
  statusMessage?: string;
  /** The tool called (as the caller named it). */
  tool: string;
  callId: string;
  /** Where it was asked: `mcp` (tools/call with `task`) or `rest` (`/v1/execute` with `async`). */
  via: 'mcp' | 'rest';
  /** The MCP session that asked, if any: its stream hears notifications/tasks/status. */
  session?: string;
  /** Set while (or since) the call waits for a human: the approval request it made. */
  approvalId?: string;
  createdAt: number;
  lastUpdatedAt: number;
  /** Kept this long after its last change. */
  ttlMs: number;
  pollIntervalMs: number;
  /** The finished call's result, once terminal (a cancelled task has none). */
  result?: ToolResult;
}

export const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminalStatus = (status: TaskStatus): boolean => TERMINAL.includes(status);

/** Each refusal's row of the TG_* table: LIMIT is 503 (retry once some finish), TERMINAL a 409. */
const TASK_ERROR_CODES = { NOT_FOUND: 'TG_NOT_FOUND', LIMIT: 'TG_OVERLOADED', TERMINAL: 'TG_CONFLICT' } as const satisfies Record<string, ErrorCode>;

/** A task operation refused; `NOT_FOUND` is also the answer for another user's or tenant's id. */
export class TaskError extends DomainError {
  readonly code: keyof typeof TASK_ERROR_CODES;
  constructor(code: TaskError['code'], message: string) {
    super(message);
    this.name = 'TaskError';
    this.code = code;
  }

  get gatewayCode(): ErrorCode {
    return TASK_ERROR_CODES[this.code];
  }
}
