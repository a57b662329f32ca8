// User-level MCP tools belong to one user: another user of the same tenant (or the same sub in another
// tenant) never sees or calls them — not through the listing, /v1/execute, /mcp, aliases or odd spellings.
// The same with the tenants in the configuration file and with them kept in the state store.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/store/bus.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { createTenantRecords } from '../../src/tenants/records.js';
import { bearer, buildTestApp, JWT_SECRET, signToken, testConfig } from '../helpers/build.js';
import { installLoopbackGuard, type LoopbackGuard } from '../helpers/loopback-guard.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';

let guard: LoopbackGuard;
let upstream: TestUpstream;
let app: FastifyInstance;
let baseUrl: string;
const tokens: Record<string, string> = {};
const ALICE_TOOL = 'user_alice_tool_secret_lookup';

describe.each(['file', 'store'] as const)('with the tenants in the %s', (source) => {
  const store = createMemoryStore();
  beforeAll(async () => {
    guard = installLoopbackGuard();
    upstream = await startMcpUpstream([textTool('secret_lookup', (args) => `alice's secret for ${String(args.q)}`)]);
    if (source === 'store') for (const id of ['acme', 'globex']) await createTenantRecords(store, createMemoryBus()).create(id, {}, 'test/setup');
    app = await buildTestApp(
      testConfig({
        // Loopback allowed only because the test upstream listens there.
        egress: { allow: ['127.0.0.1'] },
        // An operator alias that spells alice's tool name: it must never open alice's tool to anyone else.
        tools: { get_weather: { aliases: [ALICE_TOOL, 'weather'] } },
        // From the store: no tenant in the file (and so no API key, which would name one).
        ...(source === 'store' ? { auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' } }, tenants: {} } : {}),
      }),
      { store },
    );
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    tokens.alice = await signToken({ sub: 'alice' });
    tokens.bob = await signToken({ sub: 'bob' });
    tokens.aliceElsewhere = await signToken({ sub: 'alice', tenant: 'globex' });
    const put = await app.inject({ method: 'PUT', url: '/v1/users/alice/mcp-servers/vault', headers: bearer(tokens.alice), payload: { url: upstream.url } });
    expect(put.statusCode).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    guard.uninstall();
    await store.close();
    expect(guard.violations).toEqual([]);
  });

  const listNames = async (token: string) => (await app.inject({ url: '/v1/tools', headers: bearer(token) })).json().tools.map((t: { name: string }) => t.name) as string[];
  const execute = async (token: string, name: string) =>
    (await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: { q: 'x' } } })).json();

  async function withMcp<T>(token: string, use: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ name: 'isolation-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
    try {
      return await use(client);
    } finally {
      await client.close();
    }
  }

  describe('user-level MCP isolation', () => {
    it('shows and runs the tool for its owner only', async () => {
      expect(await listNames(tokens.alice!)).toContain(ALICE_TOOL);
      expect(await execute(tokens.alice!, ALICE_TOOL)).toMatchObject({ ok: true, output: "alice's secret for x", source: 'user-mcp' });
      for (const other of [tokens.bob!, tokens.aliceElsewhere!]) {
        expect((await listNames(other)).filter((name) => name.startsWith('user_'))).toEqual([]);
      }
    });

    it("answers another user calling the owner's tool as an unknown name, even through an operator alias", async () => {
      const denied = await execute(tokens.bob!, ALICE_TOOL);
      expect(denied).toMatchObject({ ok: false, error: { errorType: 'UNKNOWN_TOOL', error: `unknown tool: ${ALICE_TOOL}` } });
      expect(JSON.stringify(denied)).not.toContain('secret for');
      // The same sub in another tenant is another user: there the name is only the operator's alias of
      // get_weather (her own, empty namespace), never the acme registration.
      const elsewhere = await execute(tokens.aliceElsewhere!, ALICE_TOOL);
      expect(elsewhere).toMatchObject({ name: 'get_weather', resolvedFrom: ALICE_TOOL, source: 'function' });
      expect(JSON.stringify(elsewhere)).not.toContain('secret for');
    });

    it('never reaches the tool through other spellings of its name', async () => {
      for (const name of ['User_alice_tool_secret_lookup', 'user_alice_tool_secret%5Flookup', 'user_alice_tool_secret_lookup ', 'user_alice%5Ftool_secret_lookup', 'user_alice_tool_', 'user_alic_tool_secret_lookup']) {
        const result = await execute(tokens.bob!, name);
        expect(result.ok, name).toBe(false);
        expect(JSON.stringify(result)).not.toContain('secret for');
      }
    });

    it('keeps /mcp listing and calls to the owner as well', async () => {
      const aliceTools = await withMcp(tokens.alice!, async (client) => (await client.listTools()).tools.map((t) => t.name));
      expect(aliceTools).toContain(ALICE_TOOL);
      await withMcp(tokens.bob!, async (client) => {
        expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(ALICE_TOOL);
        const result = await client.callTool({ name: ALICE_TOOL, arguments: { q: 'x' } });
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain('UNKNOWN_TOOL');
        expect(JSON.stringify(result.content)).not.toContain('secret for');
      });
    });

    it('lets no other user read, replace or delete the registration', async () => {
      for (const method of ['GET', 'DELETE'] as const) {
        const res = await app.inject({ method, url: '/v1/users/alice/mcp-servers/vault', headers: bearer(tokens.bob!) });
        expect(res.statusCode).toBe(403);
      }
      const replace = await app.inject({ method: 'PUT', url: '/v1/users/alice/mcp-servers/vault', headers: bearer(tokens.bob!), payload: { url: upstream.url } });
      expect(replace.statusCode).toBe(403);
      // Alice's own tenant path only: the same sub in another tenant sees no registration.
      const elsewhere = await app.inject({ url: '/v1/users/alice/mcp-servers', headers: bearer(tokens.aliceElsewhere!) });
      expect(elsewhere.json().servers).toEqual([]);
    });
  });
});
