// Governance reads the same in both MCP eras: a refused, a denied and an approval-gated call answer with
// the same wording and write the same audit line whether the client speaks 2025-11-25 (initialize,
// sessions) or 2026-07-28 (stateless); and an approval-gated call from a modern client that declared the
// Tasks extension is a task, approved or denied through the REST approvals, its result read by tasks/get.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';
import { connectModernClient, modernPost, TASKS_EXTENSION } from '../helpers/mcp-modern.js';

let app: FastifyInstance;
let baseUrl: string;
let alice: string;
let viewer: string;
let bob: string;
let approver: string;
const audit: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const base = governedConfig();
  app = await buildTestApp(
    governedConfig({
      tenants: { ...base.tenants, acme: { ...base.tenants.acme, roles: { viewer: { deny: ['write_*'] } } } },
    }),
  );
  const write = app.audit.write.bind(app.audit);
  app.audit.write = (event) => {
    audit.push({ ...event });
    write(event);
  };
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  alice = await signToken({ sub: 'alice' });
  viewer = await signToken({ sub: 'vera', roles: ['viewer'] });
  bob = await signToken({ sub: 'bob' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
});
afterAll(async () => {
  await app?.close();
});

interface Answer {
  text: string;
  isError: unknown;
  meta: unknown;
}

/** One call through a connected client (either SDK's), which is closed afterwards. */
async function callThrough(client: { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<Record<string, unknown>>; close(): Promise<void> }, name: string, args: Record<string, unknown>): Promise<Answer> {
  try {
    const result = await client.callTool({ name, arguments: args });
    return { text: (result.content as Array<{ text: string }>).map((block) => block.text).join('\n'), isError: result.isError, meta: result._meta };
  } finally {
    await client.close();
  }
}

/** A call answered in the legacy era (v1 client: initialize and a session). */
async function legacyCall(token: string, name: string, args: Record<string, unknown>): Promise<Answer> {
  const client = new Client({ name: 'legacy', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
  return callThrough(client, name, args);
}

/** The same call answered in the modern era (v2 client, negotiated; no session). */
async function modernCall(token: string, name: string, args: Record<string, unknown>): Promise<Answer> {
  const client = await connectModernClient(baseUrl, token);
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return callThrough(client, name, args);
}

/** The last `call` audit line of a user, without what differs per call (its time, ids, duration). */
function lastCallLine(user: string): Record<string, unknown> {
  const line = audit.filter((event) => event.event === 'call' && event.user === user).at(-1);
  expect(line).toBeDefined();
  const { time: _time, requestId: _requestId, callId: _callId, durationMs: _duration, approvalId, ...rest } = line!;
  return { ...rest, approvalId: approvalId === null ? null : '<id>' };
}

/** Wording without what differs per call (call and approval ids, an approval's expiry time). */
const wording = (text: string): string =>
  text
    .replace(/call_[0-9a-f-]{36}/g, '<callId>')
    .replace(/approvalId [A-Za-z0-9_-]+/g, 'approvalId <id>')
    .replace(/expires \d{4}-\d\d-\d\dT[\d:.]+Z/g, 'expires <time>');

describe('the same governance in both eras', () => {
  it('answers and audits a role-denied call identically', async () => {
    const legacy = await legacyCall(viewer, 'write_note', { text: 'x' });
    const legacyLine = lastCallLine('vera');
    const modern = await modernCall(viewer, 'write_note', { text: 'x' });
    const modernLine = lastCallLine('vera');
    expect(legacy.text).toContain('PERMISSION_DENIED');
    expect(modern.isError).toBe(true);
    expect(wording(modern.text)).toBe(wording(legacy.text));
    expect(modernLine).toEqual(legacyLine);
  });

  it('answers and audits a call refused by validation identically', async () => {
    const legacy = await legacyCall(alice, 'create_ticket', { title: 42 });
    const legacyLine = lastCallLine('alice');
    const modern = await modernCall(alice, 'create_ticket', { title: 42 });
    const modernLine = lastCallLine('alice');
    expect(legacy.text).toContain('VALIDATION_ERROR');
    expect(wording(modern.text)).toBe(wording(legacy.text));
    expect(modernLine).toEqual(legacyLine);
  });

  it('answers an approval-gated call without the Tasks extension with the legacy fallback: the same tool error naming the approval', async () => {
    const legacy = await legacyCall(alice, 'create_ticket', { title: 'fallback-legacy' });
    const legacyLine = lastCallLine('alice');
    const modern = await modernCall(alice, 'create_ticket', { title: 'fallback-legacy' });
    const modernLine = lastCallLine('alice');
    expect(legacy.text).toMatch(/needs human approval and has not run yet \(approvalId /);
    expect(modern.isError).toBe(true);
    expect(wording(modern.text)).toBe(wording(legacy.text));
    expect(modern.meta).toMatchObject({ 'toolgate/approvalId': expect.any(String), 'toolgate/status': 'pending_approval' });
    expect(modernLine).toEqual(legacyLine);
  });
});

describe('an approval-gated call as a task of the Tasks extension (2026-07-28)', () => {
  const withTasks = { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
  const getTask = (token: string, taskId: string) => modernPost(baseUrl, token, 'tasks/get', { taskId }, withTasks);

  async function createTask(title: string): Promise<{ taskId: string; approvalId: string }> {
    const created = await modernPost(baseUrl, alice, 'tools/call', { name: 'create_ticket', arguments: { title } }, withTasks);
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({ resultType: 'task', taskId: expect.any(String), status: 'working', ttlMs: expect.any(Number) });
    const statusMessage = String(created.body.result?.statusMessage);
    expect(statusMessage).toMatch(/waiting for a human to approve create_ticket \(approvalId /);
    return { taskId: String(created.body.result?.taskId), approvalId: /approvalId ([A-Za-z0-9_-]+)/.exec(statusMessage)![1]! };
  }

  it('is created as a task, approved through REST approve, and its result read with tasks/get', async () => {
    const { taskId, approvalId } = await createTask('task-approved');
    expect((await getTask(alice, taskId)).body.result).toMatchObject({ taskId, status: 'working', resultType: 'complete' });
    const approved = await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
    expect(approved.statusCode).toBe(200);
    await vi.waitFor(async () => expect((await getTask(alice, taskId)).body.result?.status).toBe('completed'), { timeout: 5000 });
    const done = (await getTask(alice, taskId)).body.result;
    expect(done?.result).toMatchObject({ content: [{ type: 'text', text: 'ticket "task-approved" created for alice' }], isError: false });
  });

  it('completes with APPROVAL_DENIED when the approver denies it', async () => {
    const { taskId, approvalId } = await createTask('task-denied');
    await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/deny`, headers: bearer(approver), payload: {} });
    await vi.waitFor(async () => expect((await getTask(alice, taskId)).body.result?.status).toBe('completed'), { timeout: 5000 });
    const done = (await getTask(alice, taskId)).body.result?.result as { isError: boolean; content: Array<{ text: string }> };
    expect(done.isError).toBe(true);
    expect(done.content[0]!.text).toContain('APPROVAL_DENIED');
  });

  it('withdraws the approval on tasks/cancel', async () => {
    const { taskId, approvalId } = await createTask('task-cancelled');
    const cancelled = await modernPost(baseUrl, alice, 'tasks/cancel', { taskId }, withTasks);
    expect(cancelled.body.error).toBeUndefined();
    expect((await getTask(alice, taskId)).body.result?.status).toBe('cancelled');
    const approve = await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
    expect(approve.statusCode).toBe(409);
  });

  it("answers another user's task id exactly as an unknown one, for tasks/get and tasks/cancel", async () => {
    const { taskId } = await createTask('task-private');
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const foreign = await modernPost(baseUrl, bob, method, { taskId }, withTasks);
      const unknown = await modernPost(baseUrl, bob, method, { taskId: 'no-such-task' }, withTasks);
      expect(foreign.body.error?.message).toMatch(/not found/i);
      expect(foreign.status).toBe(unknown.status);
      expect(JSON.stringify(foreign.body)).toBe(JSON.stringify(unknown.body));
    }
  });

  it('with approvalCalls: required, refuses such a call from a client without the extension as the legacy era does, and audits it', async () => {
    const base = governedConfig();
    const required = { ...base, mcpServer: { ...base.mcpServer, tasks: { ...base.mcpServer.tasks, approvalCalls: 'required' as const } } };
    await app.gateway.reload({ ...required, tenants: app.gateway.config.tenants });
    try {
      const refused = await modernPost(baseUrl, alice, 'tools/call', { name: 'create_ticket', arguments: { title: 'untasked' } });
      expect(refused.body.error?.code).toBe(-32601);
      expect(refused.body.error?.message).toContain('needs human approval and must be called as a task');
      expect(lastCallLine('alice')).toMatchObject({ tool: 'create_ticket', errorType: 'VALIDATION_ERROR' });
      const tasked = await modernPost(baseUrl, alice, 'tools/call', { name: 'create_ticket', arguments: { title: 'tasked' } }, withTasks);
      expect(tasked.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    } finally {
      await app.gateway.reload({ ...governedConfig(), tenants: app.gateway.config.tenants });
    }
  });

  it('runs a call of a tool that needs no approval inline, even for a client that declared the extension', async () => {
    const answer = await modernPost(baseUrl, alice, 'tools/call', { name: 'get_weather', arguments: { city: 'Oslo' } }, withTasks);
    expect(answer.body.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: '{"city":"Oslo","tempC":21}' }] });
  });
});
