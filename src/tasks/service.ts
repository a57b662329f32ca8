import { randomBytes } from 'node:crypto';
import type { ApprovalRecord, ApprovalService } from '../approvals/types.js';
import type { AuditSink } from '../audit/types.js';
import type { MessageBus } from '../store/bus.js';
import { hashTag } from '../store/hash-tag.js';
import type { StateStore } from '../store/types.js';
import { sha256Hex } from '../shared/canonical-json.js';
import { Cancellation } from '../shared/cancellation.js';
import type { Logger, ToolResult } from '../call/types.js';
import { isTerminalStatus, TaskError, type TaskOwner, type TaskRecord, type TaskStatus } from './types.js';

/** Live limits, read from `mcpServer.tasks` at each use (a reload changes them). */
export interface TaskLimits {
  defaultTtlMs: number;
  maxTtlMs: number;
  maxPerUser: number;
}

export interface TaskServiceDeps {
  store: StateStore;
  bus: MessageBus;
  approvals: ApprovalService;
  audit: AuditSink;
  log: Logger;
  now?: () => number;
}

export interface NewTask {
  tool: string;
  callId: string;
  via: TaskRecord['via'];
  session?: string;
  requestId: string;
  /** What the client asked for; clamped to the limits. */
  ttlMs?: number | null;
}

export interface TaskService {
  /**
   * A new `working` task of `owner`, holding a place among the owner's running calls until `track`'s `done`
   * (or RUN_LEASE_MS without a run); TaskError LIMIT when the owner already holds `maxPerUser` live tasks or
   * running calls.
   */
  create(owner: TaskOwner, input: NewTask, limits: TaskLimits): Promise<TaskRecord>;
  /** The owner's task, its approval's decision applied; TaskError NOT_FOUND for any id that is not the owner's. */
  get(owner: TaskOwner, id: string): Promise<TaskRecord>;
  /** The owner's live tasks, newest first (read through its index of ids, never a keyspace scan). */
  list(owner: TaskOwner): Promise<TaskRecord[]>;
  /** The call is waiting for a human: `input_required`, naming the approval. */
  awaitApproval(owner: TaskOwner, id: string, approvalId: string, requestId: string): Promise<void>;
  /** The call finished: `completed` (ok) or `failed` (a tool error), with its result. A task cancelled meanwhile stays cancelled. */
  finish(owner: TaskOwner, id: string, result: ToolResult, requestId: string): Promise<void>;
  /**
   * An approval was decided (on this replica): the task waiting for it, if any, moves on now, so its
   * session hears the status change without anyone polling. Never throws.
   */
  approvalDecided(approval: ApprovalRecord): Promise<void>;
  /** Cancels a task that is not terminal: its run stops wherever it runs, a pending approval is withdrawn. */
  cancel(owner: TaskOwner, id: string, requestId: string): Promise<TaskRecord>;
  /** The cancellation of a run on this replica, until `done` (a cancel on any replica aborts it); `done` also gives back its place. */
  track(owner: TaskOwner, id: string): { cancellation: Cancellation; done(): void };
  /** Told of every status change this replica's store write made (e.g. to notify the task's MCP session). */
  onChange(listener: (owner: TaskOwner, task: TaskRecord) => void): () => void;
  close(): void;
}

const TASK_ID = /^[A-Za-z0-9_-]{32}$/;
const digest = (text: string): string => sha256Hex(text).slice(0, 32);
/** The owner is part of the key: another user's or tenant's lookup of an id reads another key and finds nothing. */
const ownerPrefix = (owner: TaskOwner): string => `task:${hashTag(digest(owner.tenant))}:${digest(`${owner.tenant}\u0000${owner.user}`)}:`;
/** The owner's tasks counted against `maxPerUser` (a lease group), and the ids of its newest tasks (a capped list) for listing. */
const ownerGroup = (owner: TaskOwner): string => `tasks-of:${ownerPrefix(owner)}`;
const indexKey = (owner: TaskOwner): string => `task-index:${ownerPrefix(owner)}`;
/**
 * The owner's running calls (a lease group with a lease per run, renewed while it runs): counted against
 * `maxPerUser` from the task's creation until its call ends, however short the task's own ttl.
 */
const runGroup = (owner: TaskOwner): string => `task-runs:${ownerPrefix(owner)}`;
const runPrefix = (owner: TaskOwner): string => `task-run:${ownerPrefix(owner)}`;
/** A run's place outlives a replica that died mid-call by at most this long; renewed every third of it. */
export const RUN_LEASE_MS = 60_000;
/** The task an approval request belongs to (set when its call asks for approval). */
const approvalKey = (owner: TaskOwner, approvalId: string): string => `task-approval:${ownerPrefix(owner)}${approvalId}`;
/** tasks/list reads at most this many of the newest ids (mcpServer.tasks.maxPerUser is at most 10000). */
const MAX_LISTED = 20_000;
const CHANNEL = 'tasks';
/** How often a client is told to poll (ms): a human decision or a slow tool, not a tight loop. */
export const POLL_INTERVAL_MS = 1000;
/** A stored result larger than this keeps its output but drops its trace (the output is bounded by the tool's maxResultChars). */
const MAX_RESULT_CHARS = 512 * 1024;

function bounded(result: ToolResult): ToolResult {
  return JSON.stringify(result).length <= MAX_RESULT_CHARS ? result : { ...result, trace: null };
}

const owned = (raw: string): TaskRecord => JSON.parse(raw) as TaskRecord;

/**
 * Tasks as records in the state store (docs/mcp.md#tasks), so any replica answers for any task. Every
 * status change is one compareAndSet from the exact record read, so two replicas seeing the same change
 * (an approval decided, a cancel) write it once, and only the writer audits and announces it.
 */
export function createTaskService(deps: TaskServiceDeps): TaskService {
  const { store, approvals } = deps;
  const now = deps.now ?? Date.now;
  const listeners = new Set<(owner: TaskOwner, task: TaskRecord) => void>();
  const running = new Map<string, Cancellation>();

  const keyOf = (owner: TaskOwner, id: string): string => ownerPrefix(owner) + id;
  const runRecord = (owner: TaskOwner, id: string) => ({ key: runPrefix(owner) + id, value: id });
  /** Gives back a run's place; one left behind (store down) ends by itself after RUN_LEASE_MS. */
  const endRun = (owner: TaskOwner, id: string): Promise<void> =>
    store.releaseLease({ id, record: runRecord(owner, id), groups: [runGroup(owner)] }).then(() => undefined, () => undefined);

  const load = async (owner: TaskOwner, id: string): Promise<{ raw: string; task: TaskRecord }> => {
    const raw = TASK_ID.test(id) ? await store.get(keyOf(owner, id)) : null;
    if (raw === null) throw new TaskError('NOT_FOUND', 'task not found');
    return { raw, task: owned(raw) };
  };

  const audit = (owner: TaskOwner, from: TaskStatus | null, task: TaskRecord, requestId: string): void => {
    deps.audit.write({
      event: 'task',
      time: now(),
      requestId,
      tenant: owner.tenant,
      user: owner.user,
      taskId: task.id,
      tool: task.tool,
      callId: task.callId,
      from,
      outcome: task.status,
      approvalId: task.approvalId ?? null,
    });
  };

  const announce = (owner: TaskOwner, task: TaskRecord): void => {
    for (const listener of listeners) listener(owner, task);
  };

  /** One status change from the exact record read; false when another writer got there first. */
  const transition = async (owner: TaskOwner, raw: string, next: TaskRecord, requestId: string): Promise<boolean> => {
    const before = owned(raw);
    const written = await store.compareAndSet(keyOf(owner, next.id), raw, JSON.stringify(next), { ttlMs: next.ttlMs });
    if (!written) return false;
    audit(owner, before.status, next, requestId);
    announce(owner, next);
    return true;
  };

  /** Changes a task unless it is terminal, retrying when another writer changed it meanwhile (bounded). */
  const update = async (owner: TaskOwner, id: string, change: (task: TaskRecord) => TaskRecord | undefined, requestId: string): Promise<TaskRecord> => {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const { raw, task } = await load(owner, id);
      if (isTerminalStatus(task.status)) return task;
      const next = change(task);
      if (next === undefined) return task;
      if (await transition(owner, raw, { ...next, lastUpdatedAt: now() }, requestId)) return next;
    }
    return (await load(owner, id)).task;
  };

  const terminalOf = (result: ToolResult): TaskStatus => (result.ok ? 'completed' : 'failed');

  /** What the approval's decision means for the task (read on any replica: the approver may be on another). */
  const fromApproval = (task: TaskRecord, approval: ApprovalRecord): TaskRecord | undefined => {
    if (approval.status === 'pending') return task.status === 'input_required' ? undefined : { ...task, status: 'input_required' };
    if (approval.result === undefined) {
      return task.status === 'working' ? undefined : { ...task, status: 'working', statusMessage: `approved by an approver; ${task.tool} is running` };
    }
    return { ...task, status: terminalOf(approval.result), statusMessage: approval.result.error?.errorType ?? 'completed', result: bounded(approval.result) };
  };

  const settleApproval = async (owner: TaskOwner, task: TaskRecord): Promise<TaskRecord> => {
    if (task.approvalId === undefined || isTerminalStatus(task.status)) return task;
    let approval: ApprovalRecord;
    try {
      approval = await approvals.get(task.approvalId, { tenant: owner.tenant, user: owner.user, roles: [], claims: {} });
    } catch {
      // The approval record is gone (past its retention): the task can only end as expired.
      return task;
    }
    const approvalId = task.approvalId;
    return update(owner, task.id, (current) => (current.approvalId === approvalId ? fromApproval(current, approval) : undefined), approval.requestId);
  };

  const unsubscribe = deps.bus.subscribe(CHANNEL, (raw) => {
    try {
      const message = JSON.parse(raw) as { t: 'cancel'; key: string };
      if (message.t === 'cancel') running.get(message.key)?.abort(new Error('the task was cancelled'));
    } catch {
      // not ours
    }
  });

  return {
    async create(owner, input, limits) {
      const at = now();
      const requested = input.ttlMs ?? limits.defaultTtlMs;
      const task: TaskRecord = {
        id: randomBytes(24).toString('base64url'), // 192 random bits
        status: 'working',
        tool: input.tool,
        callId: input.callId,
        via: input.via,
        ...(input.session !== undefined ? { session: input.session } : {}),
        createdAt: at,
        lastUpdatedAt: at,
        ttlMs: Math.max(1000, Math.min(requested, limits.maxTtlMs)),
        pollIntervalMs: POLL_INTERVAL_MS,
      };
      // The call's place first: a task whose record expires while its call runs still counts until the call ends.
      const runs = runGroup(owner);
      const running = await store.acquireLease({
        id: task.id,
        record: runRecord(owner, task.id),
        ttlMs: RUN_LEASE_MS,
        own: { key: runs, limit: limits.maxPerUser, recordPrefix: runPrefix(owner), evict: false },
        shared: { key: runs, limit: limits.maxPerUser },
      });
      if (!running.granted) throw new TaskError('LIMIT', `you have ${limits.maxPerUser} task calls running (mcpServer.tasks.maxPerUser); wait until some finish`);
      // The owner's tasks are counted in a lease group (no keyspace scan): at `maxPerUser` a new one is
      // refused. The same group as `own` with one more place never ends an older task to make room.
      const group = ownerGroup(owner);
      const grant = await store
        .acquireLease({
          id: task.id,
          record: { key: keyOf(owner, task.id), value: JSON.stringify(task) },
          ttlMs: task.ttlMs,
          own: { key: group, limit: limits.maxPerUser + 1, recordPrefix: ownerPrefix(owner) },
          shared: { key: group, limit: limits.maxPerUser },
        })
        .catch(async (error: unknown) => {
          await endRun(owner, task.id);
          throw error;
        });
      if (!grant.granted) {
        await endRun(owner, task.id);
        throw new TaskError('LIMIT', `you hold ${limits.maxPerUser} tasks (mcpServer.tasks.maxPerUser); wait until some finish and expire`);
      }
      await store.pushCapped(indexKey(owner), task.id, limits.maxPerUser * 2);
      audit(owner, null, task, input.requestId);
      return task;
    },
    async get(owner, id) {
      return settleApproval(owner, (await load(owner, id)).task);
    },
    async list(owner) {
      const ids = [...new Set(await store.recent(indexKey(owner), MAX_LISTED))];
      const found = await Promise.all(ids.map((id) => store.get(keyOf(owner, id))));
      const live = found.filter((raw): raw is string => raw !== null).map(owned);
      return Promise.all(live.map((task) => settleApproval(owner, task)));
    },
    async awaitApproval(owner, id, approvalId, requestId) {
      const { task } = await load(owner, id);
      await store.set(approvalKey(owner, approvalId), id, { ttlMs: task.ttlMs });
      await update(owner, id, (task) => ({ ...task, status: 'input_required', approvalId, statusMessage: `waiting for a human to approve ${task.tool} (approvalId ${approvalId})` }), requestId);
    },
    async finish(owner, id, result, requestId) {
      await update(owner, id, (task) => ({ ...task, status: terminalOf(result), statusMessage: result.error?.errorType ?? 'completed', result: bounded(result) }), requestId);
    },
    async approvalDecided(approval) {
      const owner = { tenant: approval.tenant, user: approval.requester.user };
      try {
        const id = await store.get(approvalKey(owner, approval.id));
        if (id !== null) await settleApproval(owner, (await load(owner, id)).task);
      } catch (error) {
        // Polling (tasks/get, tasks/result) settles it later.
        deps.log.warn({ err: error }, 'task of a decided approval not updated');
      }
    },
    async cancel(owner, id, requestId) {
      const { task } = await load(owner, id);
      if (isTerminalStatus(task.status)) throw new TaskError('TERMINAL', `task is already ${task.status}`);
      const cancelled = await update(owner, id, (current) => ({ ...current, status: 'cancelled', statusMessage: 'cancelled by the caller' }), requestId);
      if (cancelled.status !== 'cancelled') throw new TaskError('TERMINAL', `task is already ${cancelled.status}`);
      // Withdrawn: the approver's inbox no longer lists it (it reads as expired, without a result).
      if (cancelled.approvalId !== undefined) await approvals.expire(cancelled.approvalId, owner.tenant).catch(() => undefined);
      const key = keyOf(owner, id);
      running.get(key)?.abort(new Error('the task was cancelled'));
      await deps.bus.publish(CHANNEL, JSON.stringify({ t: 'cancel', key })).catch((error: unknown) => deps.log.warn({ err: error }, 'task cancellation not published'));
      return cancelled;
    },
    track(owner, id) {
      const key = keyOf(owner, id);
      const cancellation = new Cancellation();
      running.set(key, cancellation);
      const renew = setInterval(() => {
        store.renewLease({ id, record: runRecord(owner, id), groups: [runGroup(owner)], ttlMs: RUN_LEASE_MS }).catch(() => undefined);
      }, RUN_LEASE_MS / 3);
      renew.unref();
      let ended = false;
      return {
        cancellation,
        done: () => {
          if (ended) return;
          ended = true;
          clearInterval(renew);
          if (running.get(key) === cancellation) running.delete(key);
          void endRun(owner, id);
        },
      };
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close() {
      unsubscribe();
      for (const cancellation of running.values()) cancellation.abort(new Error('shutting down'));
      running.clear();
    },
  };
}
