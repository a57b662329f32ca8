// The metrics the Grafana dashboard and the alert rules (deploy/) read, as the metrics listener serves them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';

const execute = async (app: FastifyInstance, name: string, args: Record<string, unknown>, token: string) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args } });

/** The value of one exact series line (`name{labels}`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A scrape reuses a backlog read for 1 s. */
const backlogReadExpires = () => new Promise((resolve) => setTimeout(resolve, 1_100));

describe('metrics for the dashboard and alerts', () => {
  let app: FastifyInstance;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    app = await buildTestApp(governedConfig({ mcp: { local: [{ service: 'calc', module: './test/fixtures/mcp/calc-module.mjs' }] } }));
    alice = await signToken({ sub: 'alice' });
    bob = await signToken({ sub: 'bob', roles: ['approver'] });
  });
  afterAll(async () => app.close());

  it('resolves in-process calls from 100 µs up to 60 s by default', async () => {
    expect((await execute(app, 'get_weather', { city: 'x' }, alice)).json().ok).toBe(true);
    const text = await scrapeMetrics(app);
    const bounds = [...text.matchAll(/^toolgate_tool_call_duration_seconds_bucket\{le="([^"]+)",tool="get_weather"/gm)].map((m) => m[1]);
    expect(bounds).toEqual(['0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf']);
  });

  it('counts calls per tenant and outcome (configured tenants only: an unknown one is refused before any call)', async () => {
    await execute(app, 'get_weather', { city: 'x' }, await signToken({ sub: 'gina', tenant: 'globex' }));
    await execute(app, 'no_such_tool', {}, await signToken({ sub: 'gina', tenant: 'globex' }));
    expect((await execute(app, 'get_weather', { city: 'x' }, await signToken({ sub: 'x', tenant: 'nobody-configured' }))).statusCode).toBeGreaterThanOrEqual(400);
    const text = await scrapeMetrics(app);
    expect(sample(text, 'toolgate_tenant_calls_total{tenant="globex",outcome="ok"}')).toBe(1);
    expect(sample(text, 'toolgate_tenant_calls_total{tenant="globex",outcome="UNKNOWN_TOOL"}')).toBe(1);
    expect(text).not.toContain('nobody-configured');
    expect(text).not.toContain('no_such_tool');
  });

  it('times each upstream attempt per service and outcome', async () => {
    expect((await execute(app, 'calc_add', { a: 1, b: 2 }, alice)).json().ok).toBe(true);
    const text = await scrapeMetrics(app);
    expect(sample(text, 'toolgate_upstream_call_duration_seconds_count{service="calc",outcome="ok"}')).toBe(1);
    expect(text).not.toMatch(/toolgate_upstream_call_duration_seconds_count\{service="none"/); // in-process tools are not upstream calls
  });

  it('counts rate-limit refusals per tenant', async () => {
    for (let i = 0; i < 4; i += 1) await execute(app, 'limited_echo', { text: 'x' }, alice);
    expect(sample(await scrapeMetrics(app), 'toolgate_rate_limit_refusals_total{tenant="acme"}')).toBe(1);
  });

  it('reports the approval backlog per tenant, then the decision and its wait', async () => {
    const pending = (await execute(app, 'create_ticket', { title: 'metrics' }, alice)).json();
    expect(pending.status).toBe('pending_approval');
    await backlogReadExpires();
    let text = await scrapeMetrics(app);
    expect(sample(text, 'toolgate_approvals_pending{tenant="acme"}')).toBe(1);
    const expiry = sample(text, 'toolgate_approvals_next_expiry_seconds{tenant="acme"}');
    expect(expiry).toBeGreaterThan(50);
    expect(expiry).toBeLessThanOrEqual(60);
    expect(sample(text, 'toolgate_approvals_pending{tenant="globex"}')).toBeUndefined();

    const approved = await app.inject({ method: 'POST', url: `/v1/approvals/${pending.approvalId}/approve`, headers: bearer(bob) });
    expect(approved.json().status).toBe('approved');
    await backlogReadExpires();
    text = await scrapeMetrics(app);
    expect(sample(text, 'toolgate_approval_decisions_total{tenant="acme",decision="approved"}')).toBe(1);
    expect(sample(text, 'toolgate_approval_wait_seconds_count{decision="approved"}')).toBe(1);
    expect(sample(text, 'toolgate_approvals_pending{tenant="acme"}')).toBeUndefined();
    expect(text).not.toContain('alice');
  }, 15_000);

  it('reports readiness', async () => {
    expect(sample(await scrapeMetrics(app), 'toolgate_ready')).toBe(1);
  });
});

describe('metrics.durationBuckets', () => {
  it('replaces the buckets of both duration histograms', async () => {
    const app = await buildTestApp(testConfig({ metrics: { durationBuckets: [0.5, 0.001] } }));
    try {
      await execute(app, 'get_weather', { city: 'x' }, await signToken());
      const text = await scrapeMetrics(app);
      const bounds = [...text.matchAll(/^toolgate_tool_call_duration_seconds_bucket\{le="([^"]+)"/gm)].map((m) => m[1]);
      expect(bounds).toEqual(['0.001', '0.5', '+Inf']);
    } finally {
      await app.close();
    }
  });

  it('refuses a bound that is not a positive number', () => {
    expect(() => testConfig({ metrics: { durationBuckets: [0] } })).toThrow(/durationBuckets/);
    expect(() => testConfig({ metrics: { durationBuckets: [] } })).toThrow(/durationBuckets/);
  });
});

describe('toolgate_config_last_reload_successful', () => {
  it('is 0 after a failed reload until one succeeds', async () => {
    let broken = true;
    const config = testConfig();
    const app = await buildTestApp(config, {
      loadConfig: async () => {
        if (broken) throw new Error('config: the file must hold a mapping');
        return config;
      },
    });
    try {
      expect(sample(await scrapeMetrics(app), 'toolgate_config_last_reload_successful')).toBe(1);
      await expect(app.reloadConfig()).rejects.toThrow(/mapping/);
      let text = await scrapeMetrics(app);
      expect(sample(text, 'toolgate_config_last_reload_successful')).toBe(0);
      expect(sample(text, 'toolgate_config_reloads_total{result="error"}')).toBe(1);
      broken = false;
      await app.reloadConfig();
      text = await scrapeMetrics(app);
      expect(sample(text, 'toolgate_config_last_reload_successful')).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('audit sink errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-audit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are counted per sink', async () => {
    // A directory where the file should be: every append fails.
    const app = await buildTestApp(testConfig({ audit: { sink: 'file', path: dir } }));
    try {
      await execute(app, 'get_weather', { city: 'x' }, await signToken());
      await app.audit.flush();
      expect(sample(await scrapeMetrics(app), 'toolgate_audit_sink_errors_total{sink="file"}')).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });
});
