// The 2025-11-25 era's task methods over toolgate's tasks (docs/mcp.md#tasks): tasks/get, tasks/list and
// tasks/cancel, answered from the caller's own tasks only. SDK v2 keeps the task vocabulary on the wire
// but has no task runtime, so toolgate registers these methods itself (tasks/result is task-calls.ts's).
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Server, type Task } from '@modelcontextprotocol/server';
import { failureResult } from '../../call/tool-result.js';
import type { TaskService } from '../../tasks/service.js';
import { isTerminalStatus, type TaskOwner, type TaskRecord } from '../../tasks/types.js';
import { toCallToolResult } from './call-result.js';
import { anyParams, taskIdParams, taskWireError } from './task-wire.js';

/** A record as the MCP `Task` object. */
export function mcpTask(task: TaskRecord): Task {
  return {
    taskId: task.id,
    status: task.status,
    ttl: task.ttlMs,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    pollInterval: task.pollIntervalMs,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
  };
}

/** A terminal task's tools/call result: the call's own, or a tool error for a cancelled one. */
export function mcpTaskResult(task: TaskRecord): CallToolResult {
  const result = task.result ?? failureResult('TOOL_EXCEPTION', `the task was ${task.status} before the call finished`, { callId: task.callId, name: task.tool });
  return toCallToolResult(result);
}

export interface LegacyTaskContext {
  tasks: TaskService;
  owner: TaskOwner;
  requestId: string;
}

/** Reads the owner's task; any id that is not the owner's answers exactly as an unknown one (taskWireError). */
const ownTask = (context: LegacyTaskContext, taskId: string): Promise<TaskRecord> =>
  context.tasks.get(context.owner, taskId).catch((error: unknown) => {
    throw taskWireError(error);
  });

/**
 * tasks/get, tasks/list and tasks/cancel of the legacy era, as the 1.x SDK's own task handlers answered
 * them: the task's fields flat, one page of the caller's tasks (bounded by mcpServer.tasks.maxPerUser),
 * and a cancel that refuses a finished task.
 */
export function serveLegacyTasks(server: Server, context: LegacyTaskContext): void {
  server.setRequestHandler('tasks/get', { params: taskIdParams }, async ({ taskId }) => ({ ...mcpTask(await ownTask(context, taskId)) }));
  server.setRequestHandler('tasks/list', { params: anyParams }, async () => ({ tasks: (await context.tasks.list(context.owner)).map(mcpTask) }));
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async ({ taskId }) => {
    const task = await ownTask(context, taskId);
    if (isTerminalStatus(task.status)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${task.status}`);
    await context.tasks.cancel(context.owner, taskId, context.requestId).catch((error: unknown) => {
      throw taskWireError(error);
    });
    return { ...mcpTask(await ownTask(context, taskId)) };
  });
}
