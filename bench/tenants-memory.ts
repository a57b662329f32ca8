// Where a replica's memory goes at many YAML tenants (issue 46, Node 24): one replica of the compiled server
// with a file of N tenants (the shape of bench/tenants.ts) and an in-memory store (or `--redis <url>`'s), a probe preloaded into it
// (bench/scale/memory-probe.mjs) that writes process.memoryUsage(), v8.getHeapSpaceStatistics() and the
// resident sizes of its mappings on SIGWINCH. Samples at ready, 5 s later, after 1,000 tenants served and 5 s
// after that; prints them as JSON lines.
//
//   npx tsx bench/tenants-memory.ts [--size 100000] [--served 1000] [--settle 5000] [--log <file for the server log>] [--redis <url>] [--distinct] [-- <node flags for the replica>]
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { SECRET, tenantId, tenantOf, token, writeToolsModule } from './scale/tenant-shape.js';
import { packageRoot } from '../src/config/demo.js';
import { freePort, killAll, start, waitFor } from './scale/processes.js';

const root = packageRoot();
const { values, positionals } = parseArgs({ allowPositionals: true, options: { size: { type: 'string', default: '100000' }, served: { type: 'string', default: '1000' }, settle: { type: 'string', default: '5000' }, log: { type: 'string' }, redis: { type: 'string' }, distinct: { type: 'boolean', default: false } } });
const size = Number(values.size);
const served = Math.min(size, Number(values.served));


async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-tenants-memory-'));
  try {
    const config = {
      auth: { jwt: { secret: SECRET, issuer: 'bench', audience: 'toolgate' } },
      store: values.redis ? { kind: 'redis', url: values.redis, prefix: `tg-tenants-memory-${process.pid}:` } : { kind: 'memory' },
      audit: { sink: 'off' },
      functions: [{ module: writeToolsModule(dir) }],
      metrics: { port: await freePort() },
      tenancy: { compiledCacheSize: Math.max(2 * served, 100) },
      tenants: Object.fromEntries(Array.from({ length: size }, (_, i) => [tenantId(i), tenantOf(i, values.distinct)])),
    };
    const configFile = join(dir, 'config.yaml');
    writeFileSync(configFile, stringify(config));
    const port = await freePort();
    const probeFile = join(dir, 'probe.jsonl');
    const env = { ...process.env, TOOLGATE_CONFIG: configFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', MEMPROBE_FILE: probeFile };
    const child = start(process.execPath, [...positionals, '--import', join(root, 'bench/scale/memory-probe.mjs'), join(root, 'dist/src/server.js')], join(dir, 'server.log'), env);
    const url = `http://127.0.0.1:${port}`;
    const started = performance.now();
    await waitFor('/readyz', async () => (await fetch(`${url}/readyz`)).status === 200, 600_000);
    const readyMs = performance.now() - started;
    let samples = 0;
    const sample = async (): Promise<void> => {
      child.kill('SIGWINCH');
      samples += 1;
      await waitFor('the probe', async () => existsSync(probeFile) && readFileSync(probeFile, 'utf8').trim().split('\n').length >= samples, 10_000);
    };
    await sample();
    await sleep(Number(values.settle));
    await sample();
    for (let i = 0; i < served; i += 1) {
      const res = await fetch(`${url}/v1/tools`, { headers: { authorization: `Bearer ${await token(tenantId(i))}` } });
      if (res.status !== 200) throw new Error(`listing answered ${res.status}`);
      await res.arrayBuffer();
    }
    await sample();
    await sleep(Number(values.settle));
    await sample();
    child.kill('SIGTERM');
    const names = ['ready', `ready+${values.settle}ms`, `served ${served}`, `served+${values.settle}ms`];
    process.stdout.write(`${JSON.stringify({ node: process.version, size, distinct: values.distinct, readyMs: Math.round(readyMs), flags: positionals })}\n`);
    readFileSync(probeFile, 'utf8').trim().split('\n').forEach((line, i) => process.stdout.write(`${names[i]}: ${line}\n`));
  } finally {
    killAll();
    if (values.log) copyFileSync(join(dir, 'server.log'), values.log);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
