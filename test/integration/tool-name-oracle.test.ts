// A tenant must not learn which tools other tenants (or other users) have: a name its tenant can never
// reach answers exactly as a name nobody has, over /v1/execute, the batch endpoint and /mcp. The same with the
// tenants in the configuration file and with them kept in the state store (the tenant API's).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/store/bus.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { createTenantRecords } from '../../src/tenants/records.js';
import { bearer, buildTestApp, JWT_SECRET, signToken, testConfig } from '../helpers/build.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';

let upstream: TestUpstream;
let app: FastifyInstance;
let baseUrl: string;
let alice: string;
let viewer: string;

// Each name another tenant (or another user) has, beside a name nobody has.
const PAIRS: Array<[label: string, existing: string, nobody: string]> = [
  ["another tenant's function", 'write_note', 'write_notes'],
  ['a global service outside mcpServices', 'globex_lookup', 'globex_lookups'],
  ["another user's own MCP tool", 'user_bob_tool_lookup', 'user_carol_tool_lookup'],
];
const PLACEHOLDER = '<NAME>';

describe.each(['file', 'store'] as const)('with the tenants in the %s', (source) => {
  const store = createMemoryStore();
  beforeAll(async () => {
    upstream = await startMcpUpstream([textTool('globex_lookup', () => 'globex data'), textTool('lookup', () => "bob's data")]);
    const tenants = {
      acme: { functions: ['get_weather'], roles: { viewer: { deny: ['get_weather'] } } },
      globex: { mcpServices: ['globex_svc'] },
    };
    const records = createTenantRecords(store, createMemoryBus());
    if (source === 'store') for (const [id, config] of Object.entries(tenants)) await records.create(id, config, 'test/setup');
    app = await buildTestApp(
      testConfig({
        egress: { allow: ['127.0.0.1'] }, // the test upstream listens on loopback
        mcp: { global: [{ id: 'globex_svc', transport: 'streamable-http', url: upstream.url }] },
        // From the store: no tenant in the file (and so no API key, which would name one).
        ...(source === 'store' ? { auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' } }, tenants: {} } : { tenants }),
      }),
      { store },
    );
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    alice = await signToken({ sub: 'alice' });
    viewer = await signToken({ sub: 'vera', roles: ['viewer'] });
    const bob = await signToken({ sub: 'bob' });
    const put = await app.inject({ method: 'PUT', url: '/v1/users/bob/mcp-servers/search', headers: bearer(bob), payload: { url: upstream.url } });
    expect(put.statusCode).toBe(201);
    const bobTools = (await app.inject({ url: '/v1/tools', headers: bearer(bob) })).json().tools.map((t: { name: string }) => t.name);
    expect(bobTools).toContain('user_bob_tool_lookup');
    const globex = await signToken({ sub: 'gina', tenant: 'globex' });
    const globexTools = (await app.inject({ url: '/v1/tools', headers: bearer(globex) })).json().tools.map((t: { name: string }) => t.name);
    expect(globexTools).toEqual(expect.arrayContaining(['globex_lookup', 'write_note']));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await store.close();
  });

  /** The answer with the name replaced by a placeholder and the duration dropped: what must not differ. */
  function normalized(answer: unknown, name: string): string {
    const { durationMs: _ignored, ...rest } = answer as Record<string, unknown>;
    return JSON.stringify(rest).split(name).join(PLACEHOLDER);
  }

  async function executeAnswer(name: string, token = alice): Promise<{ status: number; body: string; errorType: string }> {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: {}, callId: 'probe' } });
    return { status: res.statusCode, body: normalized(res.json(), name), errorType: res.json().error?.errorType };
  }

  describe('tool-name oracle', () => {
    it.each(PAIRS)('answers %s over /v1/execute exactly as a name nobody has', async (_label, existing, nobody) => {
      const [a, b] = [await executeAnswer(existing), await executeAnswer(nobody)];
      expect(a.errorType).toBe('UNKNOWN_TOOL');
      expect(a).toEqual(b);
      expect(a.status).toBe(200);
    });

    it('answers the same in a batch', async () => {
      const calls = PAIRS.flatMap(([, existing, nobody]) => [existing, nobody]).map((name) => ({ name, arguments: {}, callId: 'probe' }));
      const res = await app.inject({ method: 'POST', url: '/v1/execute/batch', headers: bearer(alice), payload: { calls } });
      expect(res.statusCode).toBe(200);
      const results = res.json().results as Array<Record<string, unknown>>;
      for (let i = 0; i < results.length; i += 2) {
        expect(normalized(results[i], calls[i]!.name)).toBe(normalized(results[i + 1], calls[i + 1]!.name));
        expect(results[i]).toMatchObject({ ok: false, error: { errorType: 'UNKNOWN_TOOL' } });
      }
    });

    it('answers the same over /mcp tools/call', async () => {
      const client = new Client({ name: 'oracle-probe', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(alice) } }));
      try {
        for (const [, existing, nobody] of PAIRS) {
          const a = await client.callTool({ name: existing, arguments: {} });
          const b = await client.callTool({ name: nobody, arguments: {} });
          // The MCP endpoint makes its own callIds: compare the text without them.
          const text = (result: typeof a, name: string) => JSON.stringify(result).split(name).join(PLACEHOLDER).replace(/call_[A-Za-z0-9_-]+/g, 'CALL');
          expect(a.isError).toBe(true);
          expect(JSON.stringify(a.content)).toContain('UNKNOWN_TOOL');
          expect(text(a, existing)).toBe(text(b, nobody));
        }
      } finally {
        await client.close();
      }
    });

    it('keeps PERMISSION_DENIED for a tool the tenant has but this caller may not use now', async () => {
      expect((await executeAnswer('get_weather', viewer)).errorType).toBe('PERMISSION_DENIED');
      const gina = await signToken({ sub: 'gina', tenant: 'globex' });
      const readonly = await app.inject({
        method: 'POST',
        url: '/v1/execute',
        headers: { ...bearer(gina), 'x-toolgate-mode': 'readonly' },
        payload: { name: 'write_note', arguments: { text: 'x' } },
      });
      expect(readonly.json().error.errorType).toBe('PERMISSION_DENIED');
    });
  });
});
