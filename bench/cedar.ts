// Cedar policies on the hot path and at listing (docs/governance.md#cedar-policies): one app, two tenants with
// the same tools, one with a 20-policy set and one without; rounds alternate which goes first, and the result
// is the median of the per-round ratios. Then a listing of 500 tools, cold and again (the cache). In-process
// (app.inject), bounded; reported, never asserted.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildServer } from '../src/app.js';
import { validateConfigObject } from '../src/config/load.js';
import { packageRoot } from '../src/config/demo.js';
import { sha256Hex } from '../src/shared/canonical-json.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CALLS = Number(process.env.BENCH_CEDAR_CALLS ?? 2000);
const LIST_TOOLS = 500;

/** 20 policies of the kinds docs/governance.md shows: role limits, claims, time windows, read-only callers. */
const POLICIES = [
  '@id("everyone") permit(principal, action, resource);',
  ...Array.from({ length: 15 }, (_, i) => `@id("limit-${i}") forbid(principal, action == Action::"call", resource == Tool::"tool_${String(i).padStart(3, '0')}") when { context.arguments.n > ${1000 + i} && !(principal.roles.contains("treasurer")) };`),
  '@id("team") forbid(principal, action, resource is Tool) when { resource.name like "github_*" } unless { principal.claims has team && principal.claims.team == "platform" };',
  '@id("hours") forbid(principal, action == Action::"call", resource == Tool::"wire") unless { context.time.hour >= 8 && context.time.hour < 18 };',
  '@id("auditors") forbid(principal, action == Action::"call", resource is Tool) when { principal.roles.contains("auditor") && !resource.readOnly };',
  '@id("eu") forbid(principal, action, resource is Tool) when { resource.name like "export_*" } unless { principal.claims has region && principal.claims.region == "eu" };',
].join('\n');

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function bench(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-cedar-'));
  const module = join(dir, 'tools.mjs');
  await writeFile(
    module,
    `export default Array.from({ length: ${LIST_TOOLS} }, (_, i) => ({ name: 'tool_' + String(i).padStart(3, '0'), description: 'bench tool ' + i, readOnly: i % 2 === 0, inputSchema: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } } }, handler: () => 'ok' }));\n`,
  );
  const keys = { plain: 'tg_bench_cedar_plain', cedar: 'tg_bench_cedar_on' };
  const config = validateConfigObject(
    {
      auth: {
        apiKeys: [
          { id: 'plain', sha256: sha256Hex(keys.plain), tenant: 'plain', user: 'u', roles: [] },
          { id: 'cedar', sha256: sha256Hex(keys.cedar), tenant: 'cedar', user: 'u', roles: [] },
        ],
      },
      audit: { sink: 'off' },
      logging: { level: 'silent' },
      functions: [{ module }],
      tenants: { plain: {}, cedar: { cedar: { policies: POLICIES, claims: { team: 'String', region: 'String' } } } },
    },
    packageRoot(),
    undefined,
  );
  const app = await buildServer(config, { logger: false, defaultMetrics: false });
  try {
    const call = (key: string, n: number) => app.inject({ method: 'POST', url: '/v1/execute', headers: { authorization: `Bearer ${key}` }, payload: { name: 'tool_001', arguments: { q: 'x', n } } });
    const list = (key: string) => app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${key}` } });
    // Listing, cold then warm, on the Cedar tenant: its first listing compiles it and evaluates every tool.
    await list(keys.plain);
    let started = performance.now();
    const cold = await list(keys.cedar);
    const coldMs = performance.now() - started;
    const engine = (await app.gateway.loadTenant('cedar'))?.cedar;
    const evaluations = engine?.listingEvaluations ?? 0;
    started = performance.now();
    await list(keys.cedar);
    const warmMs = performance.now() - started;
    started = performance.now();
    await list(keys.plain);
    const plainListMs = performance.now() - started;
    const evaluationsAfter = engine?.listingEvaluations ?? 0;
    const listed = cold.json<{ tools: unknown[] }>().tools.length;

    for (let i = 0; i < 200; i += 1) await Promise.all([call(keys.plain, i), call(keys.cedar, i)]);
    // `same`: every call carries the same arguments (Cedar's decision cache answers after the first);
    // `vary`: `n`, which the policies read, differs at every call, so every call is a Cedar decision.
    const variants = ['same', 'vary'] as const;
    type Series = Record<'plain' | 'cedar', { rate: number[]; cpu: number[] }> & { ratios: number[] };
    const fresh = (): Series => ({ plain: { rate: [], cpu: [] }, cedar: { rate: [], cpu: [] }, ratios: [] });
    const series: Record<(typeof variants)[number], Series> = { same: fresh(), vary: fresh() };
    // Below every limit of the set (the calls stay allowed), and never the same twice.
    let n = 0;
    /** Calls/s and CPU µs per call of one tenant's CALLS sequential calls. */
    async function phase(key: string, vary: boolean): Promise<[number, number]> {
      const cpu = process.cpuUsage();
      const began = performance.now();
      for (let i = 0; i < CALLS; i += 1) {
        n -= 1;
        await call(key, vary ? n : 5);
      }
      const rate = CALLS / ((performance.now() - began) / 1000);
      const used = process.cpuUsage(cpu);
      return [rate, (used.user + used.system) / CALLS];
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      const plainFirst = round % 2 === 0;
      for (const variant of variants) {
        const row = series[variant];
        const vary = variant === 'vary';
        const first = await phase(plainFirst ? keys.plain : keys.cedar, vary);
        const second = await phase(plainFirst ? keys.cedar : keys.plain, vary);
        const [plain, cedar] = plainFirst ? [first, second] : [second, first];
        row.plain.rate.push(plain[0]);
        row.plain.cpu.push(plain[1]);
        row.cedar.rate.push(cedar[0]);
        row.cedar.cpu.push(cedar[1]);
        row.ratios.push(cedar[0] / plain[0]);
      }
    }
    const us = (values: number[]) => (1e6 / median(values)).toFixed(1);
    const rows = variants.flatMap((variant) => {
      const { plain, cedar, ratios } = series[variant];
      return [
        `| ${variant}: calls/s off, on (median of rounds) | ${median(plain.rate).toFixed(0)}, ${median(cedar.rate).toFixed(0)} |`,
        `| ${variant}: µs per call off → on (median) | ${us(plain.rate)} → ${us(cedar.rate)} |`,
        `| ${variant}: CPU µs per call off → on (process.cpuUsage, median) | ${median(plain.cpu).toFixed(1)} → ${median(cedar.cpu).toFixed(1)} |`,
        `| ${variant}: on / off, median of per-round ratios | ${median(ratios).toFixed(3)} |`,
        `| ${variant}: per-round ratios | ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')} |`,
      ];
    });
    return [
      '## cedar',
      '',
      `One app, two tenants with the same ${LIST_TOOLS} function tools; \`cedar\` has a ${POLICIES.split('\n').length}-policy set, \`plain\` none. ${ROUNDS} rounds of ${CALLS} sequential \`POST /v1/execute\` (app.inject) per tenant and variant, alternating which tenant goes first.`,
      '',
      '| | value |',
      '|---|---:|',
      ...rows,
      `| listing ${LIST_TOOLS} tools, Cedar on, first (compile + ${evaluations} listing decisions) | ${coldMs.toFixed(1)} ms (${listed} listed) |`,
      `| listing again (cache): new listing decisions | ${warmMs.toFixed(1)} ms (${evaluationsAfter - evaluations}) |`,
      `| listing ${LIST_TOOLS} tools, Cedar off (warm) | ${plainListMs.toFixed(1)} ms |`,
      '',
    ].join('\n');
  } finally {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  }
}
