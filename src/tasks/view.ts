import type { TaskRecord } from './types.js';

/** A task as the REST API shows it (src/schemas/task.ts): ISO times, the record's own names for ttl and poll interval. */
export function taskView(task: TaskRecord) {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    tool: task.tool,
    callId: task.callId,
    ...(task.approvalId !== undefined ? { approvalId: task.approvalId } : {}),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttl: task.ttlMs,
    pollInterval: task.pollIntervalMs,
    ...(task.result !== undefined ? { result: task.result } : {}),
  };
}
