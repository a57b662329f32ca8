// MCP tasks across three replicas (buildServer three times) sharing one Redis: a task created through one
// replica is approved through a second and its result read through a third; a cancel on one replica stops
// the run on another.
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditEvent } from '../../src/audit/types.js';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';
import { callAsTask, connectTaskClient } from '../helpers/mcp-tasks.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-tasks:${randomBytes(6).toString('hex')}:`;
const replicas: FastifyInstance[] = [];
const urls: string[] = [];
const audit: AuditEvent[] = [];
let alice: string;
let approver: string;

beforeAll(async () => {
  if (!REDIS_URL) return;
  const config = governedConfig({ store: { kind: 'redis', url: REDIS_URL, prefix } });
  for (let index = 0; index < 3; index += 1) {
    const app = await buildTestApp(config);
    const write = app.audit.write.bind(app.audit);
    app.audit.write = (event) => {
      audit.push(event);
      write(event);
    };
    replicas.push(app);
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
  }
  alice = await signToken({ sub: 'alice' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
});
afterAll(async () => {
  await Promise.all(replicas.map((app) => app.close()));
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const connect = (url: string): Promise<Client> => connectTaskClient(url, alice, 'task-replicas');

describe.skipIf(!REDIS_URL)('MCP tasks on three replicas sharing one Redis', () => {
  it('creates through replica 1, is approved through replica 2, and tasks/result on replica 3 returns the output; each transition audited once', async () => {
    const [one, three] = [await connect(urls[0]!), await connect(urls[2]!)];
    const task = await callAsTask(one, 'create_ticket', { title: 'three-replicas' });
    expect(task.status).toBe('input_required');
    const waiting = await three.experimental.tasks.getTask(task.taskId);
    const approvalId = /approvalId ([A-Za-z0-9_-]+)/.exec(waiting.statusMessage ?? '')?.[1];
    expect(approvalId).toBeDefined();
    const approved = await replicas[1]!.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
    expect(approved.statusCode).toBe(200);
    const result = await three.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'ticket "three-replicas" created for alice' }]);
    expect(governedState().executions.filter((e) => e.title === 'three-replicas')).toHaveLength(1);
    // Every replica read the decided approval; one wrote each change, and only that one audited it.
    await Promise.all(replicas.map((app) => app.inject({ method: 'POST', url: '/mcp', headers: { ...bearer(alice), accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: task.taskId } } })));
    const transitions = audit.filter((event) => event.event === 'task' && event.taskId === task.taskId).map((event) => (event.event === 'task' ? event.outcome : ''));
    expect(transitions).toEqual(['working', 'input_required', 'completed']);
    await Promise.all([one.close(), three.close()]);
  });

  it('cancels through replica 3 a task running on replica 1: the run stops there', async () => {
    const [one, three] = [await connect(urls[0]!), await connect(urls[2]!)];
    const task = await callAsTask(one, 'slow', { ms: 20_000 });
    expect(task.status).toBe('working');
    const cancelled = await three.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    // The run on replica 1 ended (its call was aborted) long before its 20 s.
    await vi.waitFor(() => expect(audit.some((event) => event.event === 'call' && event.tool === 'slow' && event.outcome !== 'ok')).toBe(true), { timeout: 5000 });
    expect((await one.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
    await Promise.all([one.close(), three.close()]);
  });
});
