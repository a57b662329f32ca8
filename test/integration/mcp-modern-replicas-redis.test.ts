// MCP 2026-07-28 across three replicas sharing one Redis, behind HAProxy round-robin with no stickiness:
// every modern request is answered by whichever replica it reaches (no session anywhere), and an
// approval-gated call made a task on replica 1 is approved through replica 2's REST API and read on replica 3.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';
import { connectModernClient, MODERN_VERSION, modernPost, TASKS_EXTENSION } from '../helpers/mcp-modern.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';
import { findExecutable, freeLoopbackPort, stopChild } from '../helpers/redis-server.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';

const REDIS_URL = testRedisUrl();
const HAPROXY = findExecutable('haproxy', `${process.env.PATH ?? ''}:/usr/sbin:/sbin`);
const prefix = `tg-test-modern:${randomBytes(6).toString('hex')}:`;
const replicas: FastifyInstance[] = [];
const urls: string[] = [];
/** Calls each replica ran (its audit `call` lines). */
const callsOn: number[] = [0, 0, 0];
let proxy: ChildProcess | undefined;
let proxyUrl = '';
let dir = '';
let alice: string;
let approver: string;
let userServer: TestUpstream | undefined;

beforeAll(async () => {
  if (!REDIS_URL || !HAPROXY) return;
  userServer = await startMcpUpstream([textTool('lookup', (args) => `found ${String(args.text)}`)]);
  // Users may register a loopback server of their own in this test.
  const config = governedConfig({ store: { kind: 'redis', url: REDIS_URL, prefix }, egress: { allow: ['127.0.0.1'] } });
  for (let index = 0; index < 3; index += 1) {
    const app = await buildTestApp(config);
    const write = app.audit.write.bind(app.audit);
    app.audit.write = (event) => {
      if (event.event === 'call') callsOn[index] = (callsOn[index] ?? 0) + 1;
      write(event);
    };
    replicas.push(app);
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
  }
  dir = mkdtempSync(join(tmpdir(), 'toolgate-modern-haproxy-'));
  const port = await freeLoopbackPort();
  // Round-robin per request, no cookie, no stick table, no source hashing: nothing ties a client to a replica.
  const lines = [
    'defaults',
    '    mode http',
    '    timeout connect 1s',
    '    timeout client 10s',
    '    timeout server 10s',
    'frontend api',
    `    bind 127.0.0.1:${port}`,
    '    default_backend toolgate',
    'backend toolgate',
    '    balance roundrobin',
    ...urls.map((url, index) => `    server r${index + 1} ${new URL(url).host}`),
    '',
  ];
  writeFileSync(join(dir, 'haproxy.cfg'), lines.join('\n'));
  proxy = spawn(HAPROXY, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
  proxyUrl = `http://127.0.0.1:${port}`;
  await vi.waitFor(async () => expect((await fetch(`${proxyUrl}/healthz`)).status).toBe(200), { timeout: 10_000, interval: 100 });
  alice = await signToken({ sub: 'alice' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
}, 60_000);

afterAll(async () => {
  if (proxy) await stopChild(proxy, 5_000);
  await userServer?.close();
  await Promise.all(replicas.map((app) => app.close()));
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

describe.skipIf(!REDIS_URL || !HAPROXY)('MCP 2026-07-28 on three replicas behind HAProxy round-robin', () => {
  it('answers 200 modern calls, spread over all three replicas, none needing a session', async () => {
    const before = [...callsOn];
    const answers: Array<{ status: number; text: unknown; session: string | null }> = [];
    // Ten at a time: a bounded load, enough to interleave requests over the backends.
    for (let batch = 0; batch < 20; batch += 1) {
      const round = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          const answer = await modernPost(proxyUrl, alice, 'tools/call', { name: 'get_weather', arguments: { city: `c${batch}-${index}` } });
          const content = answer.body.result?.content as Array<{ text: string }> | undefined;
          return { status: answer.status, text: content?.[0]?.text, session: answer.headers.get('mcp-session-id') };
        }),
      );
      answers.push(...round);
    }
    expect(answers).toHaveLength(200);
    expect(answers.filter((answer) => answer.status === 200 && typeof answer.text === 'string' && answer.text.includes('"tempC":21'))).toHaveLength(200);
    expect(answers.filter((answer) => answer.session !== null)).toEqual([]);
    const served = callsOn.map((count, index) => count - (before[index] ?? 0));
    expect(served.reduce((sum, count) => sum + count, 0)).toBe(200);
    // Round-robin: each replica took about a third.
    for (const count of served) expect(count).toBeGreaterThanOrEqual(50);
  }, 120_000);

  it('lets the SDK v2 client negotiate, list and call through the balancer', async () => {
    const client = await connectModernClient(proxyUrl, alice);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('get_weather');
      for (let index = 0; index < 6; index += 1) expect((await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).isError).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("announces on replica 1's subscriptions/listen stream a pool change made on replica 2 (the user registers an MCP server)", async () => {
    const client = await connectModernClient(urls[0]!, alice);
    try {
      let announced = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        announced += 1;
      });
      await client.listen({ toolsListChanged: true });
      const put = await fetch(`${urls[1]}/v1/users/alice/mcp-servers/search`, { method: 'PUT', headers: { ...bearer(alice), 'content-type': 'application/json' }, body: JSON.stringify({ url: userServer!.url }) });
      expect(put.status).toBe(201);
      await vi.waitFor(() => expect(announced).toBeGreaterThanOrEqual(1), { timeout: 5000, interval: 50 });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('user_alice_tool_lookup');
    } finally {
      await fetch(`${urls[1]}/v1/users/alice/mcp-servers/search`, { method: 'DELETE', headers: bearer(alice) });
      await client.close();
    }
  });

  it('creates an approval task on replica 1, approves it through replica 2, reads its result on replica 3', async () => {
    const withTasks = { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
    const created = await modernPost(urls[0]!, alice, 'tools/call', { name: 'create_ticket', arguments: { title: 'modern-replicas' } }, withTasks);
    expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = String(created.body.result?.taskId);
    const approvalId = /approvalId ([A-Za-z0-9_-]+)/.exec(String(created.body.result?.statusMessage))?.[1];
    expect(approvalId).toBeDefined();
    const approved = await replicas[1]!.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
    expect(approved.statusCode).toBe(200);
    await vi.waitFor(async () => expect((await modernPost(urls[2]!, alice, 'tasks/get', { taskId }, withTasks)).body.result?.status).toBe('completed'), { timeout: 10_000 });
    const read = await modernPost(urls[2]!, alice, 'tasks/get', { taskId }, withTasks);
    expect(read.body.result?.result).toMatchObject({ content: [{ type: 'text', text: 'ticket "modern-replicas" created for alice' }], isError: false });
  });
});
