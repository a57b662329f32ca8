// ai4j's default MCP client (McpProtocolProfile.AUTO) probes server/discover and falls back to initialize
// only on JSON-RPC -32601: against toolgate it must pick the modern profile, against a legacy-only server
// the legacy one (the probe, from ai4j's Java source: test/helpers/ai4j-probe.ts).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLegacyOnlyServer, type LegacyOnlyServer } from '../../fixtures/mcp/legacy-only-server.js';
import { ai4jProbe } from '../../helpers/ai4j-probe.js';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';

let app: FastifyInstance;
let baseUrl: string;
let legacy: LegacyOnlyServer;
let token: string;

beforeAll(async () => {
  app = await buildTestApp(testConfig({ tenants: { acme: { toolsets: { weather: { tools: ['get_weather'] } } }, globex: {} } }));
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  legacy = await startLegacyOnlyServer();
  token = await signToken({ sub: 'alice' });
});
afterAll(async () => {
  await app?.close();
  await legacy?.close();
});

describe("ai4j's protocol probe", () => {
  it('selects the modern profile against toolgate, on /mcp and on a toolset', async () => {
    expect(await ai4jProbe(`${baseUrl}/mcp`, bearer(token))).toBe('MODERN_2026_07_28');
    expect(await ai4jProbe(`${baseUrl}/mcp/weather`, bearer(token))).toBe('MODERN_2026_07_28');
  });

  it('selects the legacy profile against a legacy-only server', async () => {
    expect(await ai4jProbe(legacy.url, {})).toBe('LEGACY_2025_11_25');
  });

  it('is refused, not classified, without a token (no era verdict from a 401)', async () => {
    await expect(ai4jProbe(`${baseUrl}/mcp`, {})).rejects.toThrow(/HTTP 401/);
  });
});
