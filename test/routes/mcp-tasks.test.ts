// MCP tasks on toolgate's own endpoint, seen by the SDK's Client with task support over real HTTP: a slow
// tool as a task (working → completed, status notifications on the session's GET stream), an approval-gated
// call as a task (input_required → approved / denied / withdrawn), and tasks of others answering as unknown.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';
import { callAsTask, connectTaskClient } from '../helpers/mcp-tasks.js';

let app: FastifyInstance;
let baseUrl: string;
let alice: string;
let bob: string;
let approver: string;
let globexAlice: string;
const audit: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  app = await buildTestApp(governedConfig());
  // The audit lines, as the sink writes them.
  const write = app.audit.write.bind(app.audit);
  app.audit.write = (event) => {
    audit.push({ ...event });
    write(event);
  };
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
  globexAlice = await signToken({ sub: 'alice', tenant: 'globex' });
});
afterAll(async () => {
  await app?.close();
});

const connect = (token: string): Promise<Client> => connectTaskClient(baseUrl, token, 'task-test');

const statusOf = async (client: Client, taskId: string): Promise<string> => (await client.experimental.tasks.getTask(taskId)).status;

describe('MCP tasks', () => {
  it('declares the tasks capability and lists every tool with taskSupport optional', async () => {
    const client = await connect(alice);
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'slow')?.execution).toEqual({ taskSupport: 'optional' });
    await client.close();
  });

  it('runs a 5 s tool as a task: working, then completed, with status notifications on the GET stream', async () => {
    const client = await connect(alice);
    const notified: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notified.push(notification.params.status);
    });
    const task = await callAsTask(client, 'slow', { ms: 5000 });
    expect(task.status).toBe('working');
    expect(await statusOf(client, task.taskId)).toBe('working');
    await vi.waitFor(async () => expect(await statusOf(client, task.taskId)).toBe('completed'), { timeout: 15_000, interval: 250 });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'waited 5000' }]);
    expect(result.isError).toBe(false);
    await vi.waitFor(() => expect(notified).toContain('completed'), { timeout: 5000 });
    // Created and completed: one audit line per transition.
    expect(audit.filter((event) => event.event === 'task' && event.taskId === task.taskId).map((event) => event.outcome)).toEqual(['working', 'completed']);
    await client.close();
  }, 30_000);

  it('answers a task-augmented call of an approval-gated tool input_required; approved, tasks/result returns the output', async () => {
    const client = await connect(alice);
    const notified: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notified.push(notification.params.status);
    });
    const task = await callAsTask(client, 'create_ticket', { title: 'task-approved' });
    expect(task.status).toBe('input_required');
    const waiting = await client.experimental.tasks.getTask(task.taskId);
    expect(waiting.statusMessage).toMatch(/waiting for a human to approve create_ticket \(approvalId /);
    const approvalId = /approvalId ([A-Za-z0-9_-]+)/.exec(waiting.statusMessage ?? '')?.[1];
    const approved = await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
    expect(approved.statusCode).toBe(200);
    // The decision moves the task on at once: its session hears it without polling.
    await vi.waitFor(() => expect(notified).toContain('completed'), { timeout: 5000 });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'ticket "task-approved" created for alice' }]);
    expect(await statusOf(client, task.taskId)).toBe('completed');
    await client.close();
  });

  it('fails a denied approval task with APPROVAL_DENIED', async () => {
    const client = await connect(alice);
    const task = await callAsTask(client, 'create_ticket', { title: 'task-denied' });
    const approvalId = /approvalId ([A-Za-z0-9_-]+)/.exec((await client.experimental.tasks.getTask(task.taskId)).statusMessage ?? '')?.[1];
    await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/deny`, headers: bearer(approver), payload: {} });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('APPROVAL_DENIED');
    expect(await statusOf(client, task.taskId)).toBe('failed');
    expect(governedState().executions.filter((e) => e.title === 'task-denied')).toHaveLength(0);
    await client.close();
  });

  it('withdraws a pending approval on tasks/cancel: the approver no longer sees it pending', async () => {
    const client = await connect(alice);
    const task = await callAsTask(client, 'create_ticket', { title: 'task-withdrawn' });
    const approvalId = /approvalId ([A-Za-z0-9_-]+)/.exec((await client.experimental.tasks.getTask(task.taskId)).statusMessage ?? '')?.[1];
    const pendingBefore = await app.inject({ method: 'GET', url: '/v1/approvals?status=pending', headers: bearer(approver) });
    expect(pendingBefore.json().approvals.map((a: { id: string }) => a.id)).toContain(approvalId);
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    const pendingAfter = await app.inject({ method: 'GET', url: '/v1/approvals?status=pending', headers: bearer(approver) });
    expect(pendingAfter.json().approvals.map((a: { id: string }) => a.id)).not.toContain(approvalId);
    const approve = await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
    expect(approve.statusCode).toBe(409);
    expect(governedState().executions.filter((e) => e.title === 'task-withdrawn')).toHaveLength(0);
    await client.close();
  });

  it("answers another user's or tenant's task id exactly like an unknown one, for get, result, cancel and list", async () => {
    const owner = await connect(alice);
    const task = await callAsTask(owner, 'slow', { ms: 10 });
    const unknownId = 'A'.repeat(32);
    const answers = async (client: Client, id: string): Promise<string[]> => {
      // The answer may echo the id the client sent, never anything else about it.
      const settle = (work: Promise<unknown>) => work.then(() => 'ok', (error: unknown) => String(error).replace(id, '<id>'));
      return [
        await settle(client.experimental.tasks.getTask(id)),
        await settle(client.experimental.tasks.getTaskResult(id, CallToolResultSchema)),
        await settle(client.experimental.tasks.cancelTask(id)),
      ];
    };
    for (const token of [bob, globexAlice]) {
      const other = await connect(token);
      const forOwners = await answers(other, task.taskId);
      expect(forOwners).toEqual(await answers(other, unknownId));
      expect(forOwners[0]).toMatch(/Task not found/);
      expect((await other.experimental.tasks.listTasks()).tasks.map((listed) => listed.taskId)).not.toContain(task.taskId);
      await other.close();
    }
    expect((await owner.experimental.tasks.listTasks()).tasks.map((listed) => listed.taskId)).toContain(task.taskId);
    await owner.close();
  });

  it('keeps the plain answer for a call without task: an approval-gated tool is a tool error naming the approval', async () => {
    const client = await connect(alice);
    const result = await client.callTool({ name: 'create_ticket', arguments: { title: 'no-task' } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('needs human approval and has not run yet');
    await client.close();
  });
});

describe('tasks/result', () => {
  it('waits at most mcpServer.tasks.resultWaitMs for an unfinished task, then answers RequestTimeout', async () => {
    const bounded = await buildTestApp(governedConfig({ mcpServer: { tasks: { resultWaitMs: 300 } } }));
    try {
      const url = await bounded.listen({ host: '127.0.0.1', port: 0 });
      const client = new Client({ name: 'task-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(alice) } }));
      const task = await callAsTask(client, 'slow', { ms: 20_000 });
      const waited = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).then(
        () => 'answered',
        (error: unknown) => String(error),
      );
      expect(waited).toMatch(/-32001.*is still working; call tasks\/result again/);
      await client.experimental.tasks.cancelTask(task.taskId);
      await client.close();
    } finally {
      await bounded.close();
    }
  });
});
