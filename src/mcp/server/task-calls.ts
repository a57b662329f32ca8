// tools/call as a task, and tasks/result bounded in time (docs/mcp.md#tasks).
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type CreateTaskResult, type Server } from '@modelcontextprotocol/server';
import type { Drain } from '../../http/drain.js';
import type { TenantSlots } from '../../http/tenant-slots.js';
import { startTask as startTaskRun } from '../../tasks/run.js';
import type { TaskLimits, TaskService } from '../../tasks/service.js';
import { isTerminalStatus, type TaskOwner, type TaskRecord, TaskError } from '../../tasks/types.js';
import type { Logger, ToolResult } from '../../call/types.js';
import { mcpTask, mcpTaskResult } from './task-store.js';
import { taskIdParams, taskWireError } from './task-wire.js';

/** JSON-RPC's request timeout code (-32001, the 1.x SDK's ErrorCode.RequestTimeout; v2 keeps timeouts local). */
const REQUEST_TIMEOUT = -32001;

/** The server's tasks capability: tools/call may be a task; tasks can be listed and cancelled. */
export const TASK_CAPABILITIES = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } as const;

/**
 * How long the answer to a task-augmented tools/call waits for the call's first decision, so a call that
 * asks for approval is answered `input_required` rather than `working` (the approval policy decides
 * within milliseconds; a call still undecided then is answered `working` and changes later).
 */
const FIRST_DECISION_WAIT_MS = 250;

export interface TaskCallContext {
  tasks: TaskService;
  owner: TaskOwner;
  session: string | undefined;
  requestId: string;
  drain: Pick<Drain, 'track'>;
  log: Logger;
  limits: () => TaskLimits & { resultWaitMs: number };
  slots: TenantSlots;
}

/** Creates the caller's task for one tools/call, starts its run on this replica and answers CreateTaskResult. */
export async function callAsTask(context: TaskCallContext, call: TaskCall, execute: (signal: AbortSignal) => Promise<ToolResult>): Promise<CreateTaskResult> {
  return { task: mcpTask(await startTask(context, call, execute)) };
}

export interface TaskCall {
  name: string;
  callId: string;
  ttl: number | undefined;
}

/**
 * Creates the caller's task for one tools/call and starts its run on this replica; answers the task as it
 * stands once its first decision is made (or after a short wait), in either MCP era's shape.
 */
export async function startTask(context: TaskCallContext, call: TaskCall, execute: (signal: AbortSignal) => Promise<ToolResult>): Promise<TaskRecord> {
  const { tasks, owner } = context;
  const { task, decided } = await startTaskRun({
    tasks,
    owner,
    input: { tool: call.name, callId: call.callId, via: 'mcp', requestId: context.requestId, ttlMs: call.ttl ?? null, ...(context.session !== undefined ? { session: context.session } : {}) },
    limits: context.limits(),
    slots: context.slots,
    requestId: context.requestId,
    drain: context.drain,
    log: context.log,
    execute,
  });
  await Promise.race([decided, sleep(FIRST_DECISION_WAIT_MS, undefined, { ref: false })]);
  return tasks.get(owner, task.id);
}

/**
 * tasks/result: the 1.x SDK's own handler waited without an end; this one waits at most `resultWaitMs` (polling
 * the store, where a decision made on any replica shows) and then answers RequestTimeout, so a client
 * calls again rather than hold a request open for the length of a human's decision.
 */
export function boundTaskResults(server: Server, context: TaskCallContext): void {
  server.setRequestHandler('tasks/result', { params: taskIdParams }, async ({ taskId }, ctx) => {
    const deadline = Date.now() + context.limits().resultWaitMs;
    for (;;) {
      const task = await context.tasks.get(context.owner, taskId).catch((error: unknown) => {
        throw taskWireError(error);
      });
      if (isTerminalStatus(task.status)) {
        const result = mcpTaskResult(task);
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new ProtocolError(REQUEST_TIMEOUT, `task ${taskId} is still ${task.status}; call tasks/result again or poll tasks/get`);
      await sleep(Math.min(task.pollIntervalMs, left), undefined, { signal: ctx.mcpReq.signal }).catch(() => {
        throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'Request cancelled');
      });
    }
  });
}
