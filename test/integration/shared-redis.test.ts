import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

// Two gateway replicas (buildServer twice) sharing one Redis must give the same answers.
const REDIS_URL = testRedisUrl();
const prefix = `tg-test-replicas:${randomBytes(6).toString('hex')}:`;
let replicaA: FastifyInstance;
let replicaB: FastifyInstance;
let alice: string;
let bob: string;
let upstream: TestUpstream;

beforeAll(async () => {
  if (!REDIS_URL) return;
  upstream = await startMcpUpstream([textTool('lookup', (args) => `found ${String(args.q)}`)]);
  // Loopback is allowed here only because the test's upstream listens there.
  const config = governedConfig({ store: { kind: 'redis', url: REDIS_URL, prefix }, egress: { allow: ['127.0.0.1'] } });
  [replicaA, replicaB] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob', roles: ['approver'] });
});
afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  await upstream?.close();
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const execute = (app: FastifyInstance, payload: Record<string, unknown>, token = alice) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload });

describe.skipIf(!REDIS_URL)('two replicas on one Redis', () => {
  it('share one rate-limit window', async () => {
    const codes = [];
    for (const app of [replicaA, replicaB, replicaA, replicaB]) codes.push((await execute(app, { name: 'limited_echo', arguments: {} })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
  });

  it('see the same approvals: requested on one, approved on the other, fetched on the first, executed once', async () => {
    const pending = await execute(replicaA, { name: 'create_ticket', arguments: { title: 'replicated' } });
    expect(pending.statusCode).toBe(202);
    const { approvalId } = pending.json();
    const listed = await replicaB.inject({ method: 'GET', url: '/v1/approvals?status=pending', headers: bearer(bob) });
    expect(listed.json().approvals.map((a: { id: string }) => a.id)).toContain(approvalId);

    const approve = (app: FastifyInstance) => app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(bob) });
    const [first, second] = await Promise.all([approve(replicaB), approve(replicaA)]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 409]);
    expect(governedState().executions.filter((e) => e.title === 'replicated')).toHaveLength(1);

    const fetched = await replicaA.inject({ method: 'GET', url: `/v1/approvals/${approvalId}`, headers: bearer(alice) });
    expect(fetched.json()).toMatchObject({ status: 'approved', result: { ok: true, output: 'ticket "replicated" created for alice' } });
  });

  it("see the same user-level MCP registrations: registered on one, listed and called on the other", async () => {
    const put = await replicaA.inject({ method: 'PUT', url: '/v1/users/alice/mcp-servers/search', headers: bearer(alice), payload: { url: upstream.url } });
    expect(put.statusCode).toBe(201);
    const listed = await replicaB.inject({ method: 'GET', url: '/v1/users/alice/mcp-servers', headers: bearer(alice) });
    expect(listed.json().servers.map((server: { serviceId: string }) => server.serviceId)).toEqual(['search']);
    const tools = await replicaB.inject({ method: 'GET', url: '/v1/tools', headers: bearer(alice) });
    expect(tools.json().tools.map((tool: { name: string }) => tool.name)).toContain('user_alice_tool_lookup');
    const called = await execute(replicaB, { name: 'user_alice_tool_lookup', arguments: { q: 'x' } });
    expect(called.json()).toMatchObject({ ok: true, output: 'found x', source: 'user-mcp' });
    const otherUser = await execute(replicaA, { name: 'user_alice_tool_lookup', arguments: { q: 'x' } }, bob);
    expect(otherUser.json().error.errorType).toBe('UNKNOWN_TOOL');
    await replicaB.inject({ method: 'DELETE', url: '/v1/users/alice/mcp-servers/search', headers: bearer(alice) });
    const afterDelete = await replicaA.inject({ method: 'GET', url: '/v1/users/alice/mcp-servers', headers: bearer(alice) });
    expect(afterDelete.json().servers).toEqual([]);
    const toolsAfter = await replicaA.inject({ method: 'GET', url: '/v1/tools', headers: bearer(alice) });
    expect(toolsAfter.json().tools.map((tool: { name: string }) => tool.name)).not.toContain('user_alice_tool_lookup');
  });
});
