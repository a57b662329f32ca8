// toolgate's task records in the shape of the MCP Tasks extension (SEP-2663) of the 2026-07-28 era
// (docs/mcp.md#two-protocol-eras); the legacy era's shape is task-store.ts's.
import type { TaskRecord } from '../../tasks/types.js';
import { mcpTaskResult } from './task-store.js';

/**
 * The extension's statuses: a call waiting for a human is `working` (the extension's `input_required`
 * asks the client itself for input, which an approval does not), and a finished call is `completed`
 * whatever its result (a tool error is a result; `failed` is for a task that has none).
 */
function modernStatus(task: TaskRecord): 'working' | 'completed' | 'failed' | 'cancelled' {
  switch (task.status) {
    case 'working':
    case 'input_required':
      return 'working';
    case 'cancelled':
      return 'cancelled';
    default:
      return task.result === undefined ? 'failed' : 'completed';
  }
}

/** The task as a task-augmented tools/call answers it (`resultType: "task"`). */
export function modernTask(task: TaskRecord) {
  return {
    resultType: 'task',
    taskId: task.id,
    status: modernStatus(task),
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  } as const;
}

/** tasks/get: the task, with the call's result inlined once it finished. */
export function modernTaskDetail(task: TaskRecord) {
  const { resultType: _task, ...fields } = modernTask(task);
  return { ...fields, ...(fields.status === 'completed' ? { result: mcpTaskResult(task) } : {}) };
}
