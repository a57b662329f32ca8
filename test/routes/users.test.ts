import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { installLoopbackGuard, type LoopbackGuard } from '../helpers/loopback-guard.js';
import { createTestStore } from '../helpers/memory-store.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';

const resolve = async (host: string) => (host === 'intranet.test' ? ['10.0.0.5'] : []);
let guard: LoopbackGuard;
let upstream: TestUpstream;
let strict: FastifyInstance;
let open: FastifyInstance;
const token = (sub: string, extra: Record<string, unknown> = {}) => signToken({ sub, ...extra });

beforeAll(async () => {
  guard = installLoopbackGuard();
  upstream = await startMcpUpstream([textTool('echo', (args) => `up:${String(args.text)}`)]);
  strict = await buildTestApp(testConfig(), { store: createTestStore(), resolve });
  open = await buildTestApp(testConfig({ egress: { allow: ['127.0.0.1'] } }), { store: createTestStore(), resolve });
});

afterAll(async () => {
  await strict?.close();
  await open?.close();
  await upstream?.close();
  guard.uninstall();
  expect(guard.violations).toEqual([]);
});

const put = async (app: FastifyInstance, sub: string, serviceId: string, body: unknown, auth = sub) =>
  app.inject({
    method: 'PUT',
    url: `/v1/users/${encodeURIComponent(sub)}/mcp-servers/${serviceId}`,
    headers: { ...bearer(await token(auth)), 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('user MCP server routes', () => {
  it.each(['http://127.0.0.1:1/mcp', 'http://[::1]/', 'http://169.254.169.254/', 'http://intranet.test/', 'file:///etc/passwd', 'gopher://x/', 'http://127.0.0.2/', 'http://0.0.0.0/'])(
    'refuses %s with TG_EGRESS_DENIED',
    async (url) => {
      const response = await put(strict, 'alice', 'svc', { url });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'TG_EGRESS_DENIED' });
    },
  );

  it('rejects malformed JSON, unknown fields and __proto__ keys', async () => {
    expect((await put(open, 'alice', 'svc', '{"url":')).statusCode).toBe(400);
    expect((await put(open, 'alice', 'svc', { url: upstream.url, extra: 1 })).statusCode).toBe(400);
    expect((await put(open, 'alice', 'svc', `{"url":"${upstream.url}","__proto__":{"x":1}}`)).statusCode).toBe(400);
  });

  it('lets only the user or a tenant admin manage servers', async () => {
    expect((await put(open, 'alice', 'svc', { url: upstream.url }, 'bob')).json()).toMatchObject({ code: 'TG_FORBIDDEN' });
  });

  it('registers a loopback upstream when allowlisted; its tools reach only that user, never listing header values', async () => {
    const created = await put(open, 'alice', 'svc', { url: upstream.url, headers: { 'X-Api-Key': 'secret-value' } });
    expect(created.statusCode).toBe(201);
    const listed = await open.inject({ method: 'GET', url: '/v1/users/alice/mcp-servers', headers: bearer(await token('alice')) });
    expect(listed.json().servers[0]).toMatchObject({ serviceId: 'svc', headerNames: ['X-Api-Key'] });
    expect(listed.body).not.toContain('secret-value');

    const aliceTools = await open.inject({ method: 'GET', url: '/v1/tools', headers: bearer(await token('alice')) });
    expect(aliceTools.json().tools.map((tool: { name: string }) => tool.name)).toContain('user_alice_tool_echo');
    const bobTools = await open.inject({ method: 'GET', url: '/v1/tools', headers: bearer(await token('bob')) });
    expect(bobTools.body).not.toContain('user_alice_tool_echo');

    const call = await open.inject({ method: 'POST', url: '/v1/execute', headers: bearer(await token('alice')), payload: { name: 'user_alice_tool_echo', arguments: { text: 'hi' } } });
    expect(call.json()).toMatchObject({ ok: true, output: 'up:hi', source: 'user-mcp' });
    expect(upstream.requests.at(-1)?.authorization).toBeUndefined();
    expect(upstream.requests.at(-1)?.['x-api-key']).toBe('secret-value');

    const stolen = await open.inject({ method: 'POST', url: '/v1/execute', headers: bearer(await token('bob')), payload: { name: 'user_alice_tool_echo', arguments: { text: 'hi' } } });
    expect(stolen.json()).toMatchObject({ ok: false, error: { errorType: 'UNKNOWN_TOOL' } });
  });

  it('handles URL-encoded subs with / and unicode', async () => {
    const sub = 'auth0|ü/ser';
    expect((await put(open, sub, 'svc', { url: upstream.url })).statusCode).toBe(201);
    const listed = await open.inject({ method: 'GET', url: `/v1/users/${encodeURIComponent(sub)}/mcp-servers`, headers: bearer(await token(sub)) });
    expect(listed.json().servers).toHaveLength(1);
    const deleted = await open.inject({ method: 'DELETE', url: `/v1/users/${encodeURIComponent(sub)}/mcp-servers/svc`, headers: bearer(await token(sub)) });
    expect(deleted.statusCode).toBe(204);
  });

  it('removes a server with DELETE sent with `content-type: application/json` and no body (curl -X DELETE -H …)', async () => {
    expect((await put(open, 'carol', 'svc', { url: upstream.url })).statusCode).toBe(201);
    const headers = { ...bearer(await token('carol')), 'content-type': 'application/json' };
    const deleted = await open.inject({ method: 'DELETE', url: '/v1/users/carol/mcp-servers/svc', headers });
    expect(deleted.statusCode).toBe(204);
    const again = await open.inject({ method: 'DELETE', url: '/v1/users/carol/mcp-servers/svc', headers });
    expect(again.json()).toMatchObject({ statusCode: 404, code: 'TG_NOT_FOUND' });
  });
});

describe('a JSON content type with no body', () => {
  it('is no body: routes without one answer as usual, routes that need one refuse it with 400, /mcp included (promptly)', async () => {
    const headers = { ...bearer(await token('dave')), 'content-type': 'application/json' };
    const execute = await open.inject({ method: 'POST', url: '/v1/execute', headers });
    expect(execute.json()).toMatchObject({ statusCode: 400, code: 'TG_BAD_REQUEST' });
    const mcp = await open.inject({ method: 'POST', url: '/mcp', headers: { ...headers, accept: 'application/json, text/event-stream' } });
    expect(mcp.json()).toMatchObject({ statusCode: 400, code: 'TG_BAD_REQUEST', message: 'the body must be a JSON-RPC message' });
    const approver = { ...bearer(await token('erin', { roles: ['approver'] })), 'content-type': 'application/json' };
    const deny = await open.inject({ method: 'POST', url: '/v1/approvals/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/deny', headers: approver });
    expect(deny.json()).toMatchObject({ statusCode: 404, code: 'TG_NOT_FOUND' });
  });

  it('still refuses a body that is whitespace, malformed, or poisoned', async () => {
    const headers = { ...bearer(await token('dave')), 'content-type': 'application/json' };
    for (const payload of [' ', '{', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}']) {
      const res = await open.inject({ method: 'POST', url: '/v1/execute', headers, payload });
      expect(res.json(), payload).toMatchObject({ statusCode: 400, code: 'TG_BAD_REQUEST' });
    }
  });
});
