// `npm run bench:tenants`: tenants as data at scale (docs/architecture.md#tenants-compiled-on-first-use). For
// each size, tenants of one shape (an allow list, a deny, a role, a rate limit and an approval rule over 20
// shared function tools), once in the YAML file and once in Redis (the tenant API's records), two replicas of
// the compiled server on one throwaway redis-server. Prints, per row: start-up to ready, RSS after start and
// after 1,000 distinct tenants served, a cold tenant's first listing, a warm listing, a one-tenant change seen
// on the other replica, and a reload that changes one tenant.
//
//   npm run bench:tenants -- --sizes 1,1000,20000,100000 [--sources yaml,api] [--distinct] [--write]
//
// `--write` puts the table in bench/tenants-results.md. The big sizes take minutes and most of a core; run
// them on a quiet machine.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { stringify } from 'yaml';
import { findExecutable } from '../src/builtins/sandbox.js';
import { packageRoot } from '../src/config/demo.js';
import { createMemoryBus } from '../src/store/bus.js';
import { createRedisStore } from '../src/store/redis.js';
import { createTenantRecords } from '../src/tenants/records.js';
import { freePort, killAll, Replica, ThrowawayRedis, waitFor } from './scale/processes.js';

const SECRET = 'bench-secret-that-is-at-least-32-bytes-long!!';
const OPERATOR_KEY = 'tg_bench_operator_key';
const PREFIX = 'tg-bench-tenants:';
const SERVED = 1000;
const root = packageRoot();

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '1,1000' }, sources: { type: 'string', default: 'yaml,api' }, write: { type: 'boolean', default: false }, distinct: { type: 'boolean', default: false } } });
const sizes = values.sizes.split(',').map(Number);
const sources = values.sources.split(',') as Array<'yaml' | 'api'>;

/**
 * The tenant shape of the measurements (issue 46): its own deny, role and rate limit over 20 shared tools. Its
 * deny is one of 20, so tenants repeat 20 texts (tenants of a few plans); `--distinct` gives every tenant a rate
 * limit of its own, so no two texts are the same and the tenant table shares none of them.
 */
const tenantOf = (i: number) => ({
  tools: { allow: ['tool_*'], deny: [`tool_${String(i % 20).padStart(2, '0')}`] },
  roles: { viewer: { deny: ['tool_1*'] } },
  policies: { 'rate-limit': { limit: values.distinct ? 100 + i : 100, windowMs: 60000, per: 'user' }, approval: { tools: ['tool_19'] } },
});
const tenantId = (i: number): string => `t${String(i).padStart(6, '0')}`;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const token = (tenant: string): Promise<string> =>
  new SignJWT({ tenant, roles: [] }).setProtectedHeader({ alg: 'HS256' }).setSubject('bench').setIssuer('bench').setAudience('toolgate').setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
const rssMiB = (pid: number | undefined): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
};
const median = (samples: number[]): number => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? NaN;
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
async function listing(replica: Replica, bearer: string): Promise<string[]> {
  const res = await fetch(`${replica.url}/v1/tools`, { headers: { authorization: `Bearer ${bearer}` } });
  if (res.status !== 200) throw new Error(`listing answered ${res.status}`);
  return ((await res.json()) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
}

async function writeFunctions(dir: string): Promise<string> {
  const file = join(dir, 'tools.mjs');
  const tools = Array.from({ length: 20 }, (_, i) => `{ name: 'tool_${String(i).padStart(2, '0')}', description: 'bench tool ${i}', inputSchema: { type: 'object', properties: {} }, readOnly: true, handler: () => 'ok' }`);
  writeFileSync(file, `export default [\n${tools.join(',\n')}\n];\n`);
  return file;
}

function configFile(dir: string, source: 'yaml' | 'api', redisUrl: string, metricsPort: number, tenants: Record<string, unknown>): string {
  const file = join(dir, `config-${metricsPort}.yaml`);
  const config = {
    auth: {
      jwt: { secret: SECRET, issuer: 'bench', audience: 'toolgate' },
      apiKeys: [{ id: 'ops', sha256: sha256(OPERATOR_KEY), tenant: 'ops', user: 'ops', roles: [] }],
      operators: [{ apiKey: 'ops' }],
    },
    store: { kind: 'redis', url: redisUrl, prefix: PREFIX },
    audit: { sink: 'off' },
    functions: [{ module: join(dir, 'tools.mjs') }],
    metrics: { port: metricsPort },
    tenancy: { compiledCacheSize: Math.max(2 * SERVED, 100) },
    tenants: { ops: {}, ...(source === 'yaml' ? tenants : {}) },
  };
  writeFileSync(file, stringify(config));
  return file;
}

interface Row {
  size: number;
  source: string;
  startMs: number;
  rssStart: number;
  rssServed: number;
  coldMs: number;
  warmMs: number;
  changeMs: number | undefined;
  reloadMs: number;
}

async function measure(size: number, source: 'yaml' | 'api', redisBin: string): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-tenants-'));
  const redis = new ThrowawayRedis(redisBin, await freePort(), dir);
  await redis.start();
  const replicas: Replica[] = [];
  try {
    await writeFunctions(dir);
    const tenants = Object.fromEntries(Array.from({ length: size }, (_, i) => [tenantId(i), tenantOf(i)]));
    if (source === 'api') {
      // The tenant API's records, written straight into Redis (what PUT /v1/admin/tenants/{id} stores).
      const store = createRedisStore({ url: redis.url, prefix: PREFIX });
      const records = createTenantRecords(store, createMemoryBus());
      const ids = Object.keys(tenants);
      for (let i = 0; i < ids.length; i += 500) await Promise.all(ids.slice(i, i + 500).map((id) => records.create(id, tenants[id] as Record<string, unknown>, 'bench/setup')));
      await store.close();
    }
    for (const name of ['a', 'b']) {
      const metricsPort = await freePort();
      const file = configFile(dir, source, redis.url, metricsPort, tenants);
      replicas.push(new Replica({ name, port: await freePort(), metricsPort, configFile: file }, join(root, 'dist/src/server.js'), dir));
    }
    const [a, b] = replicas as [Replica, Replica];
    const startMs = await timed(() => a.start(600_000));
    const rssStart = rssMiB(a.pid);
    await b.start(600_000);

    const served = Math.min(size, SERVED);
    const cold: number[] = [];
    for (let i = 0; i < served; i += 1) {
      const bearer = await token(tenantId(i));
      const ms = await timed(() => listing(a, bearer));
      if (i < 50) cold.push(ms);
    }
    const rssServed = rssMiB(a.pid);
    const warmBearer = await token(tenantId(0));
    const warm: number[] = [];
    for (let i = 0; i < 200; i += 1) warm.push(await timed(() => listing(a, warmBearer)));

    // One tenant changed: through the API on A, polled on B (which has it compiled) until it shows.
    let changeMs: number | undefined;
    if (source === 'api') {
      const bearer = await token(tenantId(0));
      await listing(b, bearer);
      const started = performance.now();
      const res = await fetch(`${a.url}/v1/admin/tenants/${tenantId(0)}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ tools: { deny: ['tool_05'] } }),
      });
      if (res.status !== 200) throw new Error(`patch answered ${res.status}`);
      await waitFor('the change on replica b', async () => !(await listing(b, bearer)).includes('tool_05'), 10_000);
      changeMs = performance.now() - started;
    }

    // A reload that changes one tenant of the file (or none, with the tenants in the store).
    if (source === 'yaml') {
      const file = replicas[0]!.spec.configFile;
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^( *)- tool_00\n/m, '$1- tool_00\n$1- tool_01\n'));
    }
    const reloadMs = await timed(async () => {
      const res = await fetch(`${a.url}/v1/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
      if (res.status !== 200) throw new Error(`reload answered ${res.status}: ${await res.text()}`);
    });
    return { size, source, startMs, rssStart, rssServed, coldMs: median(cold), warmMs: median(warm), changeMs, reloadMs };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop('SIGTERM')));
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(rows: Row[]): string {
  const ms = (value: number | undefined): string => (value === undefined ? 'n/a' : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`);
  const lines = [
    `| tenants | source | start-up to ready | RSS after start | RSS after ${SERVED.toLocaleString('en')} served | cold first listing (median of 50) | warm listing (median of 200) | one-tenant change on the other replica | reload (one tenant changed) |`,
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => `| ${row.size.toLocaleString('en')} | ${row.source} | ${ms(row.startMs)} | ${row.rssStart} MiB | ${row.rssServed} MiB | ${ms(row.coldMs)} | ${ms(row.warmMs)} | ${ms(row.changeMs)} | ${ms(row.reloadMs)} |`),
  ];
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const redisBin = findExecutable('redis-server', process.env.PATH) ?? findExecutable('redis-server', '/usr/sbin:/usr/bin');
  if (!redisBin) throw new Error('bench:tenants needs redis-server on the PATH');
  const rows: Row[] = [];
  for (const size of sizes) {
    for (const source of sources) {
      const row = await measure(size, source, redisBin);
      rows.push(row);
      process.stdout.write(`${JSON.stringify(row)}\n`);
    }
  }
  const text = table(rows);
  process.stdout.write(`\n${text}`);
  if (values.write) writeFileSync(join(root, 'bench', 'tenants-results.md'), `# npm run bench:tenants\n\n${new Date().toISOString()}, sizes ${values.sizes}\n\n${text}`);
}

process.once('exit', killAll);
main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
