// A user's own MCP server listing 20,000 tools with 1 KB descriptions: the gateway keeps what the tenant's
// `userMcp` bounds allow, builds the user's pool once per change, and while four loops list that user's
// tools another tenant's cheap calls keep answering (docs/security-model.md#user-catalog-bounds).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { startMcpUpstream, type TestUpstream, type UpstreamTool } from '../../helpers/mcp-upstream.js';

const LISTED = 20_000;
const LIVENESS_BOUND_MS = 1000;

function hugeCatalog(): UpstreamTool[] {
  const description = 'd'.repeat(1024);
  const tools: UpstreamTool[] = Array.from({ length: LISTED }, (_, index) => ({
    definition: { name: `t${String(index).padStart(5, '0')}`, description, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    call: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  }));
  // Listed first, so within the per-server cap: its schema alone is past maxSchemaBytes.
  const enormous = Object.fromEntries(Array.from({ length: 2000 }, (_, index) => [`p${index}`, { type: 'string', description: 'x'.repeat(20) }]));
  tools.unshift({ definition: { name: 'a_huge_schema', inputSchema: { type: 'object', properties: enormous } }, call: () => ({ content: [] }) });
  tools.unshift({ definition: { name: 'a_long_description', description: 'y'.repeat(10_000), inputSchema: { type: 'object' } }, call: () => ({ content: [] }) });
  return tools;
}

let upstream: TestUpstream;
let app: FastifyInstance;
let base: string;
let attacker: string;
let victim: string;

beforeAll(async () => {
  upstream = await startMcpUpstream(hugeCatalog());
  app = await buildTestApp(
    testConfig({
      egress: { allow: ['127.0.0.1'] },
      tenants: { acme: { functions: [] }, globex: { functions: ['get_weather'] } },
    }),
  );
  // Over real sockets, as clients reach it: each request arrives as its own I/O event.
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  attacker = await signToken({ tenant: 'acme', sub: 'mallory' });
  victim = await signToken({ tenant: 'globex', sub: 'victor' });
  const put = await app.inject({ method: 'PUT', url: '/v1/users/mallory/mcp-servers/big', headers: bearer(attacker), payload: { url: upstream.url } });
  expect(put.statusCode).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await upstream?.close();
});

const ownTools = async () => {
  const listed = await fetch(`${base}/v1/tools`, { headers: bearer(attacker) });
  expect(listed.status).toBe(200);
  const { tools } = (await listed.json()) as { tools: Array<{ name: string; description: string }> };
  return tools.filter((tool) => tool.name.startsWith('user_mallory_tool_'));
};

describe("bounds on a user's own MCP catalog", () => {
  it('keeps the first userMcp.maxToolsPerServer tools, cuts long descriptions and leaves out a tool whose schema is too large', async () => {
    const tools = await ownTools();
    // 200 kept by the per-server cap, one of them left out for its schema.
    expect(tools).toHaveLength(199);
    const names = tools.map((tool) => tool.name);
    expect(names).not.toContain('user_mallory_tool_a_huge_schema');
    const long = tools.find((tool) => tool.name === 'user_mallory_tool_a_long_description');
    expect(long?.description).toHaveLength(2048);
    expect(long?.description.endsWith('…')).toBe(true);
    expect(names).toContain('user_mallory_tool_t00000');
    expect(names).not.toContain('user_mallory_tool_t00198');
  }, 60_000);

  it("keeps another tenant's calls answering within 1 s while four loops list the user's tools", async () => {
    let attacking = true;
    const loop = async () => {
      for (let i = 0; i < 25; i += 1) await ownTools();
    };
    const attack = Promise.all([loop(), loop(), loop(), loop()]).finally(() => (attacking = false));
    const latencies: number[] = [];
    const deadline = Date.now() + 90_000;
    while ((attacking || latencies.length < 5) && latencies.length < 1000 && Date.now() < deadline) {
      const started = performance.now();
      const answer = await fetch(`${base}/v1/execute`, {
        method: 'POST',
        headers: { ...bearer(victim), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'get_weather', arguments: { city: 'Oslo' } }),
      });
      const result = (await answer.json()) as { ok: boolean };
      latencies.push(performance.now() - started);
      expect(result.ok).toBe(true);
    }
    await attack;
    expect(Math.max(...latencies)).toBeLessThan(LIVENESS_BOUND_MS);
  }, 120_000);
});
