// Registry at catalog scale: 5,000 generated tools, pool assembly (a tenant's listing) and call
// resolution. In-process and bounded; reported, never asserted.
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { validateConfigObject } from '../src/config/load.js';
import { buildCatalog } from '../src/registry/catalog.js';
import { defineTool } from '../src/registry/define-tool.js';
import { createFeatureGate } from '../src/registry/features.js';
import { formatPool } from '../src/registry/formats.js';
import { createOverrideApplier } from '../src/registry/overrides.js';
import { assemblePool } from '../src/registry/pool.js';
import { resolveToolName } from '../src/registry/resolve.js';
import { createTenantView } from '../src/registry/tenant-view.js';
import { isUserToolName, userToolPrefix } from '../src/registry/user-names.js';
import type { Tool } from '../src/call/types.js';

const TOOL_COUNT = 5000;
const ITERATIONS = 200;
const RESOLVES = 20000;

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function bench(): Promise<string> {
  const sources = ['function', 'local-mcp', 'global-mcp'] as const;
  const tools: Tool[] = Array.from({ length: TOOL_COUNT }, (_, i) =>
    defineTool({
      name: `tool_${String(i).padStart(5, '0')}`,
      description: `Generated tool number ${i} for the registry benchmark`,
      inputSchema: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] },
      source: sources[i % 3],
      service: i % 3 === 2 ? 'svc' : undefined,
      aliases: i % 10 === 0 ? [`alias_${i}`] : [],
      handler: () => 'x',
    }),
  );
  const config = validateConfigObject(
    { mcp: { global: [{ id: 'svc', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }] }, tenants: { t: { tools: { deny: ['tool_0000*'] }, mcpServices: ['svc'], roles: { viewer: { deny: ['tool_01*'] } } } } },
    process.cwd(),
    undefined,
  );
  const log = pino({ level: 'silent' });
  const catalogStart = performance.now();
  const catalog = buildCatalog([{ kind: 'function', tools: () => tools }], {
    applyOverrides: createOverrideApplier({ 'tool_1*': { readOnly: true } }),
    featureEnabled: createFeatureGate({}, {}),
    registryTools: [],
    log,
  });
  const catalogMs = performance.now() - catalogStart;
  const tenant = createTenantView('t', config.tenants.t!);
  const principal = { tenant: 't', user: 'u', roles: ['viewer'], claims: {} };

  const listSamples: number[] = [];
  let pool = assemblePool({ catalog, tenant, principal, mode: 'default', userTools: [], onShadowed: () => undefined });
  for (let i = 0; i < ITERATIONS; i += 1) {
    const start = performance.now();
    pool = assemblePool({ catalog, tenant, principal, mode: 'default', userTools: [], onShadowed: () => undefined });
    JSON.stringify(formatPool(pool, 'openai'));
    listSamples.push(performance.now() - start);
  }
  const cachedSamples: number[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    const start = performance.now();
    JSON.stringify(formatPool(pool, 'openai'));
    cachedSamples.push(performance.now() - start);
  }
  const users = { ownPrefix: userToolPrefix('u'), isUserToolName };
  const resolveSamples: number[] = [];
  for (let i = 0; i < RESOLVES; i += 1) {
    const name = i % 4 === 0 ? `alias_${(i * 10) % TOOL_COUNT}` : `tool_${String((i * 7) % TOOL_COUNT).padStart(5, '0')}`;
    const start = performance.now();
    resolveToolName(name, pool, catalog, users, tenant.reaches);
    resolveSamples.push(performance.now() - start);
  }
  const ms = (value: number) => value.toFixed(3);
  return [
    `### Registry (${TOOL_COUNT} tools, in-process)`,
    '',
    '| measure | p50 ms | p99 ms |',
    '|---|---|---|',
    `| build catalog (once per config/provider change) | ${ms(catalogMs)} | — |`,
    `| assemble pool + serialise OpenAI listing (uncached, ${pool.tools.length} visible) | ${ms(percentile(listSamples, 50))} | ${ms(percentile(listSamples, 99))} |`,
    `| serialise listing from the cached pool (the normal request path) | ${ms(percentile(cachedSamples, 50))} | ${ms(percentile(cachedSamples, 99))} |`,
    `| resolve a call name (primary or alias) | ${ms(percentile(resolveSamples, 50))} | ${ms(percentile(resolveSamples, 99))} |`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await bench());
}
