// OpenAPI import at scale: GitHub's published description (@octokit/openapi) imported by a whole
// gateway (start-up time), then listing and tool_search latency through the HTTP routes (inject).
// In-process, loopback-free (nothing is called); reported, never asserted.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../src/app.js';
import { validateConfigObject } from '../src/config/load.js';
import { silentLogger } from './silent-logger.js';

const STARTS = 3;
const LISTINGS = 50;
const SEARCHES = 200;
const API_KEY = 'tg_bench_openapi_key';
const QUERIES = ['create issue', 'list pull request reviews', 'repository secrets', 'github_repos_get', 'workflow runs', 'gist comments', 'deploy keys', 'code scanning alerts'];

const GITHUB_SPEC = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function start(): Promise<{ app: FastifyInstance; ms: number }> {
  const config = validateConfigObject(
    {
      auth: { apiKeys: [{ id: 'bench', sha256: createHash('sha256').update(API_KEY).digest('hex'), tenant: 'acme', user: 'bench' }] },
      audit: { sink: 'off' },
      logging: { level: 'silent' },
      openapi: [{ name: 'github', spec: GITHUB_SPEC }],
      tenants: { acme: { functions: ['github_*'], policies: { 'rate-limit': false } } },
    },
    process.cwd(),
    undefined,
  );
  const started = performance.now();
  const app = await buildServer(config, { loggerInstance: silentLogger, defaultMetrics: false });
  await app.ready();
  return { app, ms: performance.now() - started };
}

export async function bench(): Promise<string> {
  const starts: number[] = [];
  let app: FastifyInstance | undefined;
  for (let i = 0; i < STARTS; i += 1) {
    const run = await start();
    starts.push(run.ms);
    if (i < STARTS - 1) await run.app.close();
    else app = run.app;
  }
  if (!app) throw new Error('no app');
  try {
    const status = app.gateway.status().find((upstream) => upstream.service === 'openapi:github');
    const detail = (status?.detail ?? {}) as { operations?: number; imported?: number; skipped?: Record<string, number>; loadMs?: number };
    const headers = { authorization: `Bearer ${API_KEY}` };

    const firstStart = performance.now();
    const first = await app.inject({ url: '/v1/tools', headers });
    const firstListMs = performance.now() - firstStart;
    if (first.statusCode !== 200) throw new Error(`listing answered ${first.statusCode}`);
    const listSamples: number[] = [];
    let listBytes = 0;
    for (let i = 0; i < LISTINGS; i += 1) {
      const started = performance.now();
      const res = await app.inject({ url: '/v1/tools', headers });
      listSamples.push(performance.now() - started);
      listBytes = res.body.length;
    }
    const searchSamples: number[] = [];
    for (let i = 0; i < SEARCHES; i += 1) {
      const query = QUERIES[i % QUERIES.length]!;
      const started = performance.now();
      const res = await app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name: 'tool_search', arguments: { query, limit: 5 } } });
      searchSamples.push(performance.now() - started);
      if (!res.json<{ ok: boolean }>().ok) throw new Error(`tool_search failed: ${res.body}`);
    }
    const ms = (value: number) => value.toFixed(1);
    const skipped = Object.entries(detail.skipped ?? {}).map(([reason, count]) => `${count} ${reason}`).join(', ') || 'none';
    return [
      `### OpenAPI import (GitHub's description, @octokit/openapi, in-process)`,
      '',
      `${detail.operations} operations: ${detail.imported} imported (deferred), skipped: ${skipped}.`,
      '',
      '| measure | p50 ms | p99 ms |',
      '|---|---|---|',
      `| gateway start-up with the document (${STARTS} starts: ${starts.map((value) => Math.round(value)).join(', ')}) | ${ms(percentile(starts, 50))} | — |`,
      `| of which read + parse + resolve + import (last start) | ${detail.loadMs ?? '—'} | — |`,
      `| first listing (pool assembled, ${listBytes} bytes) | ${ms(firstListMs)} | — |`,
      `| listing GET /v1/tools (cached pool, ${LISTINGS} requests) | ${ms(percentile(listSamples, 50))} | ${ms(percentile(listSamples, 99))} |`,
      `| tool_search via POST /v1/execute (${SEARCHES} requests, ${QUERIES.length} queries, limit 5) | ${ms(percentile(searchSamples, 50))} | ${ms(percentile(searchSamples, 99))} |`,
      '',
    ].join('\n');
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await bench());
}
