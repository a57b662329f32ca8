// The start's check child's memory over time (issue 46, ten31): builds a table of N tenants of bench/tenants.ts's
// shape (every text distinct by default), runs the compiled build's check in a child (dist/), and samples the
// child's /proc/<pid>/smaps_rollup every --every ms: resident, anonymous and file-backed pages, and VmHWM. At the
// sample of highest resident size it also keeps the child's largest mappings. Prints JSON lines.
//
//   npx tsx bench/check-child-memory.ts [--size 100000] [--every 50] [--repeated] [--root <another checkout, built>]
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { tenantId, tenantOf } from './scale/tenant-shape.js';
import { packageRoot } from '../src/config/demo.js';

const { values } = parseArgs({ options: { root: { type: 'string', default: packageRoot() }, size: { type: 'string', default: '100000' }, every: { type: 'string', default: '50' }, repeated: { type: 'boolean', default: false } } });
const root = values.root;
const mib = (kib: number): number => Math.round(kib / 102.4) / 10;

// The compiled modules, so the child runs its `.js` as the gateway's does (not through tsx's loader).
type Builder = new (bytesHint?: number, countHint?: number) => { add(id: string, text: string, digest: string | undefined): boolean; build(): unknown };
const { CompactTenantsBuilder } = (await import(join(root, 'dist/src/config/compact-tenants.js'))) as { CompactTenantsBuilder: Builder };
const { openCompactTenants } = (await import(join(root, 'dist/src/config/load.js'))) as { openCompactTenants: (data: unknown) => unknown };
const { checkTenantsInChild } = (await import(join(root, 'dist/src/snapshot/check-in-child.js'))) as { checkTenantsInChild: (compact: unknown, settings: unknown, run: unknown) => Promise<unknown> };

function children(): number[] {
  const found: number[] = [];
  for (const task of readdirSync('/proc/self/task')) {
    const text = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim();
    if (text) found.push(...text.split(/\s+/).map(Number));
  }
  return found;
}

function rollup(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n')) {
    const match = /^(Rss|Anonymous|Private_Dirty|Shared_Clean|Private_Clean):\s+(\d+)/.exec(line);
    if (match) out[match[1]!] = mib(Number(match[2]));
  }
  const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (hwm) out.hwm = mib(Number(hwm[1]));
  return out;
}

function largest(pid: number): Array<{ range: string; path: string; rss: number }> {
  const rows: Array<{ range: string; path: string; rss: number }> = [];
  let current: { range: string; path: string; rss: number } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      const parts = line.trim().split(/\s+/);
      current = { range: parts[0]!, path: parts[5] ?? '', rss: 0 };
      rows.push(current);
    } else if (line.startsWith('Rss:') && current) current.rss = mib(Number(line.split(/\s+/)[1]));
  }
  return rows.sort((a, b) => b.rss - a.rss).slice(0, 12);
}

const size = Number(values.size);
const builder = new CompactTenantsBuilder(size * 300, size);
for (let i = 0; i < size; i += 1) builder.add(tenantId(i), JSON.stringify(tenantOf(i, !values.repeated)), undefined);
const compact = openCompactTenants(builder.build());
const settings = { policiesModule: join(root, 'dist/policies/index.js'), baseDir: root, guardrails: undefined, auditEnabled: false, onStoreUnavailable: undefined };
const started = performance.now();
let peak: { t: number; rss: number; largest: ReturnType<typeof largest> } | undefined;
let done = false;
// As `node dist/src/server.js` runs it: not with this script's own loader (tsx), which the child would take from execArgv.
const answer = checkTenantsInChild(compact, settings, { execArgv: [] }).finally(() => (done = true));
const samples: string[] = [];
while (!done) {
  const [pid] = children();
  if (pid !== undefined) {
    try {
      const now = rollup(pid);
      const t = Math.round(performance.now() - started);
      samples.push(JSON.stringify({ t, ...now }));
      if (!peak || (now.Rss ?? 0) > peak.rss) peak = { t, rss: now.Rss ?? 0, largest: largest(pid) };
      // With NODE_OPTIONS="--import bench/scale/memory-probe.mjs" and MEMPROBE_FILE set, the child writes its heap's figures too.
      if (process.env.MEMPROBE_FILE && samples.length % 10 === 0) process.kill(pid, 'SIGWINCH');
    } catch {
      // Ended between the listing and the read.
    }
  }
  await new Promise((resolve) => setTimeout(resolve, Number(values.every)));
}
const result = await answer;
process.stdout.write(`${JSON.stringify({ node: process.version, size, ms: Math.round(performance.now() - started), answered: result !== undefined && !(typeof result === 'object' && result !== null && 'unanswered' in result) })}\n`);
for (const line of samples) process.stdout.write(`${line}\n`);
process.stdout.write(`peak ${JSON.stringify(peak)}\n`);
