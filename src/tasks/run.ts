import { failureResult } from '../call/tool-result.js';
import type { Drain } from '../http/drain.js';
import type { TenantSlots } from '../http/tenant-slots.js';
import type { Logger, ToolResult } from '../call/types.js';
import type { NewTask, TaskLimits, TaskService } from './service.js';
import { TaskError, type TaskOwner, type TaskRecord } from './types.js';

export interface TaskRun {
  tasks: TaskService;
  owner: TaskOwner;
  task: TaskRecord;
  requestId: string;
  drain: Pick<Drain, 'track'>;
  log: Logger;
  /** The call, through the one execution path; `signal` ends with a cancel of the task or a shutdown, never with the request that made it. */
  execute(signal: AbortSignal): Promise<ToolResult>;
  /** Told once the run has ended, whatever the way (e.g. to give back the tenant's slot). */
  onEnd?: () => void;
}

export interface TaskStart extends Omit<TaskRun, 'task' | 'onEnd'> {
  input: NewTask;
  limits: TaskLimits;
  slots: TenantSlots;
}

/**
 * Creates the owner's task and starts its run, which holds one of the tenant's in-flight slots until its
 * call ends (a detached call is in flight like any other): TaskError LIMIT when the tenant has none free
 * or the owner is at `maxPerUser`. Answers the task and the run's first decision (see runTask).
 */
export async function startTask(start: TaskStart): Promise<{ task: TaskRecord; decided: Promise<void> }> {
  const { slots, input, limits, ...run } = start;
  const release = await slots.take(run.owner.tenant);
  if (!release) throw new TaskError('LIMIT', 'your tenant has every call slot in use (limits.maxInFlight); retry once some calls finish');
  let task: TaskRecord;
  try {
    task = await run.tasks.create(run.owner, input, limits);
  } catch (error) {
    release();
    throw error;
  }
  return { task, decided: runTask({ ...run, task, onEnd: release }) };
}

/**
 * Runs a task's call on this replica, detached from the request that created it, and records how it ended:
 * a call that asked for approval leaves the task `input_required` (the decision, on any replica, finishes
 * it: service.ts reads the approval), any other result makes it `completed` or `failed`. Resolves once the
 * first of those is stored, so a caller can answer with the task's status at that point.
 */
export function runTask(run: TaskRun): Promise<void> {
  const { tasks, owner, task, requestId } = run;
  const tracked = tasks.track(owner, task.id);
  // A shutdown ends the run like any call (answered TIMEOUT "gateway shutting down", stored as failed).
  const release = run.drain.track(tracked.cancellation);
  return (async () => {
    try {
      const result = await run.execute(tracked.cancellation.signal).catch((error: unknown) =>
        // E.g. the tenant was removed by a reload meanwhile: the task fails rather than stay working.
        failureResult('TOOL_EXCEPTION', error instanceof Error ? error.message : 'the call failed', { callId: task.callId, name: task.tool }),
      );
      if (result.status === 'pending_approval' && result.approvalId !== undefined) await tasks.awaitApproval(owner, task.id, result.approvalId, requestId);
      else await tasks.finish(owner, task.id, result, requestId);
    } catch (error) {
      run.log.error({ err: error, taskId: task.id }, 'task result not stored');
    } finally {
      tracked.done();
      release();
      run.onEnd?.();
    }
  })();
}
