// Metrics are a shared endpoint: no label value may carry a user id or a string the caller chose.
// User-level services and tools are counted under `__user__`, unknown names under `__unknown__`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';

const SUB = 'uzer-7f3a';
const SERVICE = 'svcq9x';
const PROBE = 'probezz91';
let healthy: TestUpstream;
let failing: TestUpstream;
let app: FastifyInstance;
let baseUrl: string;
let acmeUser: string;
let globexUser: string;

beforeAll(async () => {
  healthy = await startMcpUpstream([textTool('lookup', () => 'fine')]);
  failing = await startMcpUpstream([{ definition: { name: 'lookup', inputSchema: { type: 'object' } }, call: () => ({ content: [{ type: 'text', text: 'broken' }], isError: true }) }]);
  app = await buildTestApp(
    testConfig({
      egress: { allow: ['127.0.0.1'] }, // the test upstreams listen on loopback
      tenants: { acme: { policies: { 'circuit-breaker': { failureThreshold: 2 } } }, globex: {} },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  acmeUser = await signToken({ sub: SUB });
  globexUser = await signToken({ sub: SUB, tenant: 'globex' });
  for (const [token, upstream] of [[acmeUser, failing], [globexUser, healthy]] as const) {
    const put = await app.inject({ method: 'PUT', url: `/v1/users/${SUB}/mcp-servers/${SERVICE}`, headers: bearer(token), payload: { url: upstream.url } });
    expect(put.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await app?.close();
  await Promise.all([healthy?.close(), failing?.close()]);
});

const execute = (token: string, name: string) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: {} } });

describe('metric labels', () => {
  it('carry no user id, service id or caller-chosen name after user-MCP calls and unknown-name calls', async () => {
    const tool = `user_${SUB}_tool_lookup`;
    for (let i = 0; i < 3; i += 1) await execute(acmeUser, tool);
    expect((await execute(acmeUser, tool)).json().error.errorType).toBe('CIRCUIT_OPEN');
    // The same sub in another tenant is another user with another circuit.
    expect((await execute(globexUser, tool)).json()).toMatchObject({ ok: true, output: 'fine' });
    await execute(acmeUser, PROBE);
    await execute(acmeUser, `user_${PROBE}_tool_x`);
    const client = new Client({ name: 'metrics-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(acmeUser) } }));
    try {
      await client.callTool({ name: `${PROBE}_mcp`, arguments: {} });
      await client.callTool({ name: tool, arguments: {} });
    } finally {
      await client.close();
    }

    const text = await app.metrics.registry.metrics();
    for (const secret of [SUB, SERVICE, PROBE]) expect(text).not.toContain(secret);
    expect(text).toContain('toolgate_circuit_state{service="__user__"} 1');
    expect(text).toMatch(/toolgate_upstream_call_duration_seconds_count\{service="__user__",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/toolgate_tool_calls_total\{tool="__user__",source="user-mcp",outcome="UPSTREAM_ERROR"\} [1-9]/);
    expect(text).toMatch(/toolgate_tool_calls_total\{tool="__unknown__",source="none",outcome="UNKNOWN_TOOL"\} [1-9]/);
  });
});
