// `/v1/execute` with `"async": true` and the REST view of tasks: 202 with the task at once, GET /v1/tasks/{id}
// for its status and result, the caller's own only.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';

let app: FastifyInstance;
let alice: string;
let bob: string;
let approver: string;
let globexAlice: string;

beforeAll(async () => {
  app = await buildTestApp(governedConfig());
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
  globexAlice = await signToken({ sub: 'alice', tenant: 'globex' });
});
afterAll(async () => {
  await app?.close();
});

const execute = (payload: Record<string, unknown>, token = alice) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload });
const getTask = (id: string, token = alice) => app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: bearer(token) });

describe('async execute and /v1/tasks', () => {
  it('answers 202 with a working task at once; GET /v1/tasks/{id} shows it completed with its ToolResult', async () => {
    const started = await execute({ name: 'slow', arguments: { ms: 300 }, async: true });
    expect(started.statusCode).toBe(202);
    const task = started.json();
    expect(task).toMatchObject({ status: 'working', tool: 'slow', pollInterval: 1000 });
    await vi.waitFor(async () => expect((await getTask(task.taskId)).json().status).toBe('completed'), { timeout: 5000, interval: 100 });
    const done = (await getTask(task.taskId)).json();
    expect(done).toMatchObject({ taskId: task.taskId, callId: task.callId, result: { ok: true, output: 'waited 300', name: 'slow' } });
    const listed = await app.inject({ method: 'GET', url: '/v1/tasks', headers: bearer(alice) });
    expect(listed.json().tasks.map((t: { taskId: string }) => t.taskId)).toContain(task.taskId);
  });

  it('moves an approval-gated async call to input_required, then completed once approved', async () => {
    const started = (await execute({ name: 'create_ticket', arguments: { title: 'rest-async' }, async: true })).json();
    await vi.waitFor(async () => expect((await getTask(started.taskId)).json().status).toBe('input_required'), { timeout: 5000, interval: 50 });
    const { approvalId } = (await getTask(started.taskId)).json();
    expect((await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) })).statusCode).toBe(200);
    expect((await getTask(started.taskId)).json()).toMatchObject({ status: 'completed', result: { ok: true, output: 'ticket "rest-async" created for alice' } });
  });

  it("answers another user's or tenant's task id 404 exactly like an unknown one", async () => {
    const { taskId } = (await execute({ name: 'slow', arguments: { ms: 1 }, async: true })).json();
    const unknown = await getTask('A'.repeat(32), bob);
    for (const token of [bob, globexAlice]) {
      const other = await getTask(taskId, token);
      expect(other.statusCode).toBe(404);
      expect(other.json()).toEqual(unknown.json());
      const cancel = await app.inject({ method: 'POST', url: `/v1/tasks/${taskId}/cancel`, headers: bearer(token) });
      expect(cancel.statusCode).toBe(404);
    }
  });

  it('cancels a running async call', async () => {
    const { taskId } = (await execute({ name: 'slow', arguments: { ms: 20_000 }, async: true })).json();
    const cancelled = await app.inject({ method: 'POST', url: `/v1/tasks/${taskId}/cancel`, headers: bearer(alice) });
    expect(cancelled.json()).toMatchObject({ status: 'cancelled' });
    expect((await app.inject({ method: 'POST', url: `/v1/tasks/${taskId}/cancel`, headers: bearer(alice) })).statusCode).toBe(409);
  });
});

describe('the per-user bound on tasks', () => {
  it('refuses a task beyond mcpServer.tasks.maxPerUser with 503 TG_OVERLOADED, and counts each user apart', async () => {
    const bounded = await buildTestApp(governedConfig({ mcpServer: { tasks: { maxPerUser: 2 } } }));
    try {
      const start = (token: string) => bounded.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'slow', arguments: { ms: 1 }, async: true } });
      expect([(await start(alice)).statusCode, (await start(alice)).statusCode]).toEqual([202, 202]);
      const third = await start(alice);
      expect(third.statusCode).toBe(503);
      expect(third.json().code).toBe('TG_OVERLOADED');
      expect((await start(bob)).statusCode).toBe(202);
    } finally {
      await bounded.close();
    }
  });
});
