// What a warm tenant holds (issue 46): the app built in process with N tenants of bench/tenants.ts's shape (the
// memory store), `--warm` tenants served first (the shared set-up of a first request), then `--served` more,
// each listed once through `app.inject`; old-space bytes after a full GC before and after, per tenant served.
// Also the bytes of compiling alone (`TenantTable.load`, no request) for as many other tenants. With `--snapshot
// <dir>` a heap snapshot is written at each point and the difference grouped by constructor is printed.
//
//   node --expose-gc --import tsx bench/tenant-heap.ts [--size 3000] [--served 1000] [--warm 20] [--snapshot <dir>] [--dist <another build's dist>] [--distinct]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { stringify } from 'yaml';
import { SECRET, tenantId, tenantOf, token, writeToolsModule } from './scale/tenant-shape.js';

const { values } = parseArgs({ options: { size: { type: 'string', default: '3000' }, served: { type: 'string', default: '1000' }, warm: { type: 'string', default: '20' }, snapshot: { type: 'string' }, dist: { type: 'string' }, distinct: { type: 'boolean', default: false } } });
// The compiled output `npm start` runs (npm run build first): tsx's transform names every function (esbuild's
// keepNames), which gives each closure a property dictionary of its own (256 B) the real server does not have.
const dist = (path: string): string => (values.dist ? pathToFileURL(join(values.dist, 'src', path)) : new URL(`../dist/src/${path}`, import.meta.url)).href;
const { buildServer } = (await import(dist('app.js'))) as typeof import('../src/app.js');
const { loadConfigFile } = (await import(dist('config/load.js'))) as typeof import('../src/config/load.js');

const size = Number(values.size);
const served = Number(values.served);
const warm = Number(values.warm);
if (warm + 2 * served > size) throw new Error('--size must hold --warm + 2 × --served tenants');

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
function heapUsed(): number {
  for (let i = 0; i < 3; i += 1) gc!();
  return getHeapStatistics().used_heap_size;
}

/** Self sizes and counts by node type and name (constructor for objects) of a .heapsnapshot. */
function byConstructor(file: string): Map<string, { count: number; bytes: number }> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [number, number, number];
  const groups = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt]!]!;
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'number' ? '' : snapshot.strings[snapshot.nodes[i + nameAt]!]!;
    const key = `${type}:${name.slice(0, 60)}`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += snapshot.nodes[i + sizeAt]!;
    groups.set(key, group);
  }
  return groups;
}

function printDifference(before: string, after: string, per: number): void {
  const a = byConstructor(before);
  const b = byConstructor(after);
  const rows = [...b].map(([key, group]) => ({ key, count: group.count - (a.get(key)?.count ?? 0), bytes: group.bytes - (a.get(key)?.bytes ?? 0) }));
  rows.sort((x, y) => y.bytes - x.bytes);
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  process.stdout.write(`  ${(total / per).toFixed(0).padStart(7)} B in all\n`);
  for (const row of rows.slice(0, 30)) process.stdout.write(`  ${(row.bytes / per).toFixed(0).padStart(7)} B ${(row.count / per).toFixed(1).padStart(6)} × ${row.key}\n`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-tenant-heap-'));
  try {
    const config = {
      auth: { jwt: { secret: SECRET, issuer: 'bench', audience: 'toolgate' } },
      store: { kind: 'memory' },
      audit: { sink: 'off' },
      functions: [{ module: writeToolsModule(dir) }],
      tenancy: { compiledCacheSize: size },
      tenants: Object.fromEntries(Array.from({ length: size }, (_, i) => [tenantId(i), tenantOf(i, values.distinct)])),
    };
    writeFileSync(join(dir, 'config.yaml'), stringify(config));
    const app = await buildServer(await loadConfigFile(join(dir, 'config.yaml')), { logger: false, defaultMetrics: false });
    await app.ready();
    const tokens = await Promise.all(Array.from({ length: warm + served }, (_, i) => token(tenantId(i))));
    const list = async (i: number): Promise<void> => {
      const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${tokens[i]}` } });
      if (res.statusCode !== 200) throw new Error(`listing answered ${res.statusCode}`);
    };
    for (let i = 0; i < warm; i += 1) await list(i);
    const snap = (name: string): string | undefined => (values.snapshot ? writeHeapSnapshot(join(values.snapshot, `${name}.heapsnapshot`)) : undefined);

    const before = heapUsed();
    const snapBefore = snap('before');
    for (let i = warm; i < warm + served; i += 1) await list(i);
    const afterServed = heapUsed();
    const snapServed = snap('served');
    const table = app.gateway.current().tenants;
    for (let i = warm + served; i < warm + 2 * served; i += 1) await table.load(tenantId(i));
    const afterCompiled = heapUsed();
    const snapCompiled = snap('compiled');
    process.stdout.write(`${JSON.stringify({ node: process.version, size, warm, served, servedBytesPerTenant: Math.round((afterServed - before) / served), compiledBytesPerTenant: Math.round((afterCompiled - afterServed) / served) })}\n`);
    if (snapBefore && snapServed && snapCompiled) {
      process.stdout.write('served, per tenant (self size, by constructor):\n');
      printDifference(snapBefore, snapServed, served);
      process.stdout.write('compiled only, per tenant:\n');
      printDifference(snapServed, snapCompiled, served);
    }
    await app.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
