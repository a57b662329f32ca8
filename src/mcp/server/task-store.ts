// The SDK's TaskStore over toolgate's tasks (docs/mcp.md#tasks): the SDK server answers tasks/get,
// tasks/list and tasks/cancel itself through this view, which sees only the caller's own tasks.
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { CallToolResult, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { failureResult } from '../../call/tool-result.js';
import { defaultCallId } from '../../http/call-options.js';
import type { TaskLimits, TaskService } from '../../tasks/service.js';
import { TaskError, type TaskOwner, type TaskRecord } from '../../tasks/types.js';
import { toCallToolResult } from './call-result.js';

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

const orNull = async (work: Promise<TaskRecord>): Promise<TaskRecord | null> => {
  try {
    return await work;
  } catch (error) {
    if (error instanceof TaskError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
};

export interface TaskStoreContext {
  tasks: TaskService;
  owner: TaskOwner;
  session: string | undefined;
  requestId: string;
  limits: () => TaskLimits;
}

/**
 * The caller's view of the tasks, for one request's SDK server. The SDK passes a transport session id,
 * which our per-request transport does not have: the owner (tenant + user) is what binds a task, and any
 * id that is not the owner's is answered as unknown (null). Results are stored by the task's run
 * (src/tasks/run.ts), never through the SDK.
 */
export function taskStoreFor(context: TaskStoreContext): TaskStore {
  const { tasks, owner } = context;
  return {
    async createTask(params, _requestId, request) {
      const name = typeof request.params?.name === 'string' ? request.params.name : '';
      const callId = defaultCallId(undefined, 0);
      const task = await tasks.create(owner, { tool: name, callId, via: 'mcp', requestId: context.requestId, ttlMs: params.ttl ?? null, ...(context.session !== undefined ? { session: context.session } : {}) }, context.limits());
      return mcpTask(task);
    },
    async getTask(taskId) {
      const task = await orNull(tasks.get(owner, taskId));
      return task === null ? null : mcpTask(task);
    },
    async storeTaskResult() {
      throw new Error('task results are stored by the task run');
    },
    async getTaskResult(taskId): Promise<Result> {
      return mcpTaskResult(await tasks.get(owner, taskId));
    },
    async updateTaskStatus(taskId, status) {
      if (status !== 'cancelled') throw new Error('only tasks/cancel changes a task from outside its run');
      await tasks.cancel(owner, taskId, context.requestId);
    },
    async listTasks() {
      // Bounded by mcpServer.tasks.maxPerUser: one page.
      return { tasks: (await tasks.list(owner)).map(mcpTask) };
    },
  };
}
