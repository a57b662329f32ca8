// A real Prometheus (Debian's package) scrapes a real listening gateway under some traffic (bounded,
// loopback only), loads deploy/prometheus/alerts.yml and rules/*.yml, and evaluates every panel query of
// deploy/grafana/dashboards/*.json and every alert expression through its HTTP API: none may error, the
// traffic panels return data, and every alert rule evaluates with health "ok".
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../../src/config/demo.js';
import { findBinary } from '../helpers/binary.js';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';
import { freeLoopbackPort, stopChild } from '../helpers/redis-server.js';

const prometheus = await findBinary('prometheus');
if (!prometheus) console.warn('prometheus-dashboard.test: prometheus is not installed; skipping the dashboard and alert queries (apt-get install -y prometheus)');

const root = packageRoot();
const dashboardDir = join(root, 'deploy/grafana/dashboards');
const rulesDir = join(root, 'deploy/prometheus/rules');
/** Every alert rule file the compose Prometheus loads. */
const alertFiles = [join(root, 'deploy/prometheus/alerts.yml'), ...readdirSync(rulesDir).filter((name) => name.endsWith('.yml')).map((name) => join(rulesDir, name))];

/** Panels that must show data after the traffic below (the rest may be empty: no circuit opened, no reload…). */
const TRAFFIC_PANELS = [
  'Calls per second by outcome',
  'Calls per second by tenant',
  'HTTP requests by route and status',
  'Errors by errorType',
  'Errors per tenant',
  'Duration per tool (p50/p95/p99)',
  'Duration per source (p50/p95/p99)',
  'Upstream attempt duration per service (p50/p95/p99)',
  'Upstream attempts by outcome',
  'Rate-limit refusals per tenant',
  'Approvals pending',
  'Approval decisions',
  'Overload refusals (503)',
  'Configuration reloads',
  'Policy decisions (other than pass)',
  'Requests in flight',
  'Replicas ready',
  'State store',
  'Memory',
  'CPU',
  'Event loop lag',
];

interface Panel {
  type: string;
  title: string;
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}
interface Dashboard {
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string | { query: string } }> };
}

const dashboards = readdirSync(dashboardDir)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name, dashboard: JSON.parse(readFileSync(join(dashboardDir, name), 'utf8')) as Dashboard }));
const panelsOf = (dashboard: Dashboard): Panel[] => dashboard.panels.flatMap((panel) => (panel.type === 'row' ? (panel.panels ?? []) : [panel]));

/** Every metric selector of a PromQL expression: the metric's name and its label matchers as written. */
const selectorsOf = (expr: string): Array<{ metric: string; matchers: string }> =>
  [...expr.matchAll(/\b((?:toolgate|process|nodejs)_[a-z0-9_]+)(?:\{([^}]*)\})?/g)].map(([, metric, matchers]) => ({ metric: metric!, matchers: matchers ?? '' }));

/** Grafana's variables as a query sees them: every value (`.*`, as `allValue`), or one real value. */
function substitute(expr: string, values: Record<string, string>): string {
  return expr.replace(/\$(__rate_interval|[a-z]+)/g, (whole, name: string) => (name === '__rate_interval' ? '10s' : (values[name] ?? whole)));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!prometheus)('the Grafana dashboard and the alert rules against a real Prometheus', () => {
  let app: FastifyInstance;
  let child: ChildProcess | undefined;
  let promBase = '';
  let dir = '';
  const agent = new Agent({ connections: 8 });
  const output: string[] = [];

  const query = async (expr: string): Promise<{ status: string; error?: string; data?: { result: unknown[] } }> => {
    const res = await request(`${promBase}/api/v1/query?${new URLSearchParams({ query: expr })}`, { dispatcher: agent });
    return (await res.body.json()) as { status: string; error?: string; data?: { result: unknown[] } };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tg-prometheus-'));
    app = await buildTestApp(governedConfig({ mcp: { local: [{ service: 'calc', module: './test/fixtures/mcp/calc-module.mjs' }] } }), { defaultMetrics: true });
    const api = await app.listen({ host: '127.0.0.1', port: 0 });
    const metrics = new URL(await app.metricsServer!.listen({ host: '127.0.0.1', port: 0 }));

    const port = await freeLoopbackPort();
    promBase = `http://127.0.0.1:${port}`;
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: alertFiles,
      scrape_configs: [{ job_name: 'toolgate', static_configs: [{ targets: [metrics.host] }] }],
    };
    writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config)); // JSON is YAML
    child = spawn(prometheus!, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));

    const until = async (what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!(await check().catch(() => false))) {
        if (Date.now() > deadline || child?.exitCode !== null) {
          const targets = await request(`${promBase}/api/v1/targets`, { dispatcher: agent }).then((res) => res.body.text(), (error: Error) => error.message);
          throw new Error(`${what} did not happen: ${output.join('').slice(-2000)} targets: ${targets.slice(0, 2000)}`);
        }
        await sleep(200);
      }
    };
    await until('Prometheus ready', async () => (await request(`${promBase}/-/ready`, { dispatcher: agent })).statusCode === 200, 15_000);
    // Prometheus hands new targets to its scraper after about 5 s: the traffic starts once it scrapes.
    await until('a first scrape', async () => ((await query('up{job="toolgate"} == 1')).data?.result.length ?? 0) > 0, 15_000);

    // Traffic: 16 rounds, 250 ms apart, so several 1 s scrapes see the counters move.
    const tokens = { alice: await signToken({ sub: 'alice' }), gina: await signToken({ sub: 'gina', tenant: 'globex' }) };
    const call = async (token: string, name: string, args: Record<string, unknown>) => {
      const res = await request(`${api}/v1/execute`, { method: 'POST', dispatcher: agent, headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ name, arguments: args }) });
      await res.body.dump();
    };
    for (let round = 0; round < 16; round += 1) {
      await Promise.all([
        call(tokens.alice, 'get_weather', { city: 'Oslo' }),
        call(tokens.gina, 'get_weather', { city: 'Lima' }),
        call(tokens.alice, 'calc_add', { a: round, b: 1 }),
        call(tokens.alice, 'explode', {}),
        call(tokens.gina, 'no_such_tool', {}),
        call(tokens.alice, 'limited_echo', { text: 'x' }),
        round < 2 ? call(tokens.alice, 'create_ticket', { title: `ticket ${round}` }) : undefined,
      ]);
      await sleep(250);
    }
    await until('a scrape after the traffic', async () => ((await query('sum(rate(toolgate_tool_calls_total[10s])) > 0')).data?.result.length ?? 0) > 0, 10_000);
    await sleep(1_500); // two more scrapes and rule evaluations
  }, 60_000);

  afterAll(async () => {
    if (child) await stopChild(child, 5_000);
    await app?.close();
    await agent.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the gateway', async () => {
    const up = await query('up{job="toolgate"}');
    expect(up.data?.result).toEqual([expect.objectContaining({ value: [expect.any(Number), '1'] })]);
  });

  for (const { name, dashboard } of dashboards) {
    it(`${name}: every panel query evaluates without error, for all values and for one value of each variable; the traffic panels show data`, async () => {
      const panels = panelsOf(dashboard);
      expect(panels.length).toBeGreaterThan(20);
      const titles = panels.map((panel) => panel.title);
      for (const title of TRAFFIC_PANELS) expect(titles).toContain(title);
      const selections = [
        { job: '.*', tenant: '.*', tool: '.*', service: '.*' },
        { job: 'toolgate', tenant: 'acme', tool: 'get_weather', service: 'calc' },
      ];
      for (const panel of panels) {
        expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
        for (const values of selections) {
          const results = await Promise.all(panel.targets!.map(async ({ expr }) => ({ expr: substitute(expr, values), answer: await query(substitute(expr, values)) })));
          for (const { expr, answer } of results) expect(answer, `${panel.title}: ${expr}`).toMatchObject({ status: 'success' });
          if (values.tenant === '.*' && TRAFFIC_PANELS.includes(panel.title)) {
            const rows = results.reduce((sum, { answer }) => sum + (answer.data?.result.length ?? 0), 0);
            expect(rows, `${panel.title} shows no data`).toBeGreaterThan(0);
          }
        }
      }
    });

    it(`${name}: $job narrows every query, and $tenant every query on a metric that has a tenant label`, async () => {
      const withTenant = await query('group by (__name__) ({job="toolgate", tenant!=""})');
      const tenantMetrics = new Set((withTenant.data?.result as Array<{ metric: { __name__: string } }>).map((series) => series.metric.__name__));
      expect(tenantMetrics).toContain('toolgate_tenant_calls_total');
      for (const panel of panelsOf(dashboard)) {
        for (const { expr } of panel.targets ?? []) {
          const selectors = selectorsOf(expr);
          expect(selectors.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
          for (const { metric, matchers } of selectors) {
            expect(matchers, `${panel.title}: ${metric}`).toContain('job=~"$job"');
            if (tenantMetrics.has(metric)) expect(matchers, `${panel.title}: ${metric}`).toContain('tenant=~"$tenant"');
          }
        }
      }
      // Evaluated: another job's selection empties every panel; one tenant's selection shows only that tenant.
      for (const panel of panelsOf(dashboard)) {
        for (const { expr } of panel.targets ?? []) {
          const otherJob = await query(substitute(expr, { job: 'another-job', tenant: '.*', tool: '.*', service: '.*' }));
          expect(otherJob.data?.result ?? [], `${panel.title}: ${expr}`).toEqual([]);
          const oneTenant = await query(substitute(expr, { job: '.*', tenant: 'globex', tool: '.*', service: '.*' }));
          for (const series of (oneTenant.data?.result ?? []) as Array<{ metric: { tenant?: string } }>) {
            if (series.metric.tenant !== undefined) expect(series.metric.tenant, `${panel.title}: ${expr}`).toBe('globex');
          }
        }
      }
    });

    it(`${name}: a panel never puts a count and a duration on one axis`, () => {
      const panels = panelsOf(dashboard);
      const pending = panels.find((panel) => panel.title === 'Approvals pending')!;
      expect(pending.targets!.map(({ expr }) => selectorsOf(expr).map((s) => s.metric))).toEqual([['toolgate_approvals_pending']]);
      const expiry = panels.find((panel) => panel.title === 'Next approval expiry')!;
      expect(expiry.targets!.map(({ expr }) => expr)).toEqual([expect.stringMatching(/^min by \(tenant\) \(toolgate_approvals_next_expiry_seconds\{[^}]*\}\)$/)]);
      expect(expiry.fieldConfig?.defaults?.unit).toBe('s');
      // A gauge or histogram in seconds shares a panel only with other seconds, and the panel's unit says so.
      const kind = (metric: string): string => (/_seconds(_bucket)?$/.test(metric) ? 'seconds' : 'other');
      for (const panel of panels) {
        const kinds = new Set(panel.targets!.flatMap(({ expr }) => selectorsOf(expr).map((s) => kind(s.metric))));
        expect(kinds.size, panel.title).toBe(1);
        if (kinds.has('seconds')) expect(panel.fieldConfig?.defaults?.unit, panel.title).toBe('s');
      }
    });

    it(`${name}: the template variables list values from the scraped metrics`, async () => {
      for (const variable of dashboard.templating.list.filter((entry) => entry.type === 'query')) {
        const definition = typeof variable.query === 'string' ? variable.query : variable.query.query;
        const match = /^label_values\((?:([a-z_:]+),\s*)?([a-z_]+)\)$/.exec(definition);
        expect(match, definition).not.toBeNull();
        const [, metric, label] = match!;
        const url = `${promBase}/api/v1/label/${label}/values${metric ? `?${new URLSearchParams({ 'match[]': metric })}` : ''}`;
        const answer = (await (await request(url, { dispatcher: agent })).body.json()) as { status: string; data: string[] };
        expect(answer.status).toBe('success');
        expect(answer.data.length, variable.name).toBeGreaterThan(0);
      }
    });
  }

  it('evaluates every alert expression without error, and Prometheus reports every rule healthy', async () => {
    const groups = alertFiles.flatMap((file) => (parseYaml(readFileSync(file, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups);
    const rules = groups.flatMap((group) => group.rules);
    expect(rules.length).toBeGreaterThan(10);
    for (const rule of rules) expect(await query(rule.expr), rule.alert).toMatchObject({ status: 'success' });
    const loaded = (await (await request(`${promBase}/api/v1/rules`, { dispatcher: agent })).body.json()) as {
      data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> };
    };
    const health = loaded.data.groups.flatMap((group) => group.rules.map((rule) => ({ name: rule.name, health: rule.health, lastError: rule.lastError ?? '' })));
    expect(health.map((rule) => rule.name).sort()).toEqual(rules.map((rule) => rule.alert).sort());
    for (const rule of health) expect(rule).toEqual({ name: rule.name, health: 'ok', lastError: '' });
  });
});
