// Counters whose label sets are known in advance are exposed at 0 from the first scrape (a dashboard shows
// 0, not "No data"): the per-tenant series of every configured tenant, also of a tenant a reload adds, and
// the fixed label sets (overload scopes, reload results, the configured audit sink).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { ERROR_TYPES } from '../../src/call/types.js';
import { buildTestApp, scrapeMetrics } from '../helpers/build.js';

const dir = mkdtempSync(join(tmpdir(), 'tg-metrics-zero-'));
const path = join(dir, 'toolgate.yaml');
const configWith = (tenants: string[]): string =>
  JSON.stringify({
    auth: { jwt: { secret: 'a-test-secret-of-at-least-32-bytes!!', issuer: 'https://issuer.test', audience: 'toolgate' } },
    audit: { sink: 'stdout' },
    tenants: Object.fromEntries(tenants.map((tenant) => [tenant, {}])),
  }); // JSON is YAML
let app: FastifyInstance;

beforeAll(async () => {
  writeFileSync(path, configWith(['acme', 'globex']));
  app = await buildTestApp(await loadConfigFile(path), { loadConfig: () => loadConfigFile(path) });
});
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('metrics with known label sets', () => {
  it('exposes every configured tenant and every fixed label set at 0 before any traffic', async () => {
    const text = await scrapeMetrics(app);
    for (const tenant of ['acme', 'globex']) {
      for (const outcome of ['ok', 'cancelled', 'pending_approval', ...ERROR_TYPES]) expect(text).toContain(`toolgate_tenant_calls_total{tenant="${tenant}",outcome="${outcome}"} 0\n`);
      expect(text).toContain(`toolgate_rate_limit_refusals_total{tenant="${tenant}"} 0\n`);
      expect(text).toContain(`toolgate_mcp_sessions_started_total{tenant="${tenant}"} 0\n`);
      for (const decision of ['approved', 'denied', 'expired']) expect(text).toContain(`toolgate_approval_decisions_total{tenant="${tenant}",decision="${decision}"} 0\n`);
    }
    for (const scope of ['server', 'tenant', 'public']) expect(text).toContain(`toolgate_overload_refusals_total{scope="${scope}"} 0\n`);
    for (const result of ['ok', 'error']) expect(text).toContain(`toolgate_config_reloads_total{result="${result}"} 0\n`);
    expect(text).toContain('toolgate_audit_sink_errors_total{sink="stdout"} 0\n');
    // Every tool of the catalog, under its label, at outcome ok.
    expect(text).toContain('toolgate_tool_calls_total{tool="tool_search",source="builtin",outcome="ok"} 0\n');
  });

  it('starts the series of a tenant a reload adds at 0', async () => {
    writeFileSync(path, configWith(['acme', 'globex', 'initech']));
    await app.reloadConfig();
    const text = await scrapeMetrics(app);
    expect(text).toContain('toolgate_tenant_calls_total{tenant="initech",outcome="ok"} 0\n');
    expect(text).toContain('toolgate_rate_limit_refusals_total{tenant="initech"} 0\n');
    expect(text).toContain('toolgate_config_reloads_total{result="ok"} 1\n');
  });
});
