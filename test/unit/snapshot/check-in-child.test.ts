import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactTenantsBuilder } from '../../../src/config/compact-tenants.js';
import { openCompactTenants } from '../../../src/config/load.js';
import { checkTenantsInChild, type CheckSettings } from '../../../src/snapshot/check-in-child.js';

// The start's check of many distinct file tenants in a child process (src/snapshot/check-in-child.ts): it compiles what
// it can with stand-in services, leaves Cedar and custom policies to the caller, and stops at the first bad tenant.
const settings: CheckSettings = {
  policiesModule: new URL('../../../policies/index.js', import.meta.url).href,
  baseDir: process.cwd(),
  guardrails: undefined,
  auditEnabled: false,
  onStoreUnavailable: undefined,
};

function table(tenants: Array<[string, unknown]>) {
  const builder = new CompactTenantsBuilder();
  for (const [id, tenant] of tenants) builder.add(id, JSON.stringify(tenant), undefined);
  return openCompactTenants(builder.build());
}

const limited = (i: number) => ({ policies: { 'rate-limit': { limit: 100 + i, windowMs: 60000 } } });

describe('the start check in a child process', () => {
  it('compiles every tenant there and leaves Cedar and custom policies to the caller', async () => {
    const compact = table([
      ['a', limited(0)],
      ['b', { cedar: { policies: 'permit(principal, action, resource);' } }],
      ['c', limited(1)],
      ['d', { policies: { custom: [{ module: './nowhere.js', before: 'access' }] } }],
      ['e', limited(2)],
    ]);
    await expect(checkTenantsInChild(compact, settings)).resolves.toEqual({ answer: { inCaller: [1, 3], failedAt: -1 } });
  });

  it('answers the first tenant whose compile fails, and nothing past it', async () => {
    const compact = table([
      ['a', limited(0)],
      ['b', { cedar: { policies: 'permit(principal, action, resource);' } }],
      ['c', { policies: { 'rate-limit': { limt: 5 } } }],
      ['d', { cedar: { policies: 'permit(principal, action, resource);' } }],
      ['e', { policies: { retry: { jitter: true } } }],
    ]);
    await expect(checkTenantsInChild(compact, settings)).resolves.toEqual({ answer: { inCaller: [1], failedAt: 2 } });
  });

  it('skips a tenant whose text an earlier one shares', async () => {
    const bad = { policies: { 'rate-limit': { limt: 5 } } };
    const compact = table([
      ['a', limited(0)],
      ['b', limited(0)],
      ['c', bad],
      ['d', bad],
    ]);
    await expect(checkTenantsInChild(compact, settings)).resolves.toEqual({ answer: { inCaller: [], failedAt: 2 } });
  });

  it('answers nothing when the child cannot check (the caller then checks every tenant)', async () => {
    const compact = table([['a', limited(0)]]);
    await expect(checkTenantsInChild(compact, { ...settings, policiesModule: new URL('./no-such-policies.js', import.meta.url).href })).resolves.toEqual({ unanswered: 'the child ended with code 1' });
  });
});

const fixtures = new URL('../../fixtures/check-child/', import.meta.url);
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-check-child-'));
  dirs.push(dir);
  return dir;
}

/** Whether `pid` runs: an ended child whose gateway died stays a zombie until it is reaped, and counts as ended. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The pid a fixture wrote to `file`, once it has (bounded). */
async function pidIn(file: string): Promise<number> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    if (existsSync(file) && readFileSync(file, 'utf8') !== '') return Number(readFileSync(file, 'utf8'));
    await sleep(50);
  }
  throw new Error(`no pid in ${file}`);
}

/** Whether `pid` ended within `ms` (polled). */
async function endsWithin(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited <= ms; waited += 25) {
    if (!alive(pid)) return true;
    await sleep(25);
  }
  return false;
}

describe('the start check child, bounded', () => {
  it('is killed when it does not answer within its deadline, and counts as unanswered', async () => {
    const pidFile = join(tempDir(), 'pid');
    const policiesModule = new URL('hanging-policies.mjs', fixtures).href;
    // Long enough for the child (through tsx's loader) to load the fixture and write its pid on a loaded machine.
    const outcome = checkTenantsInChild(table([['a', limited(0)]]), { ...settings, policiesModule }, { deadlineMs: 8000, env: { ...process.env, CHECK_CHILD_PID_FILE: pidFile } });
    const pid = await pidIn(pidFile);
    expect(alive(pid)).toBe(true);
    await expect(outcome).resolves.toEqual({ unanswered: 'no answer within 8000 ms' });
    expect(await endsWithin(pid, 2000)).toBe(true);
  }, 30_000);

  it('is killed when the start is aborted', async () => {
    const pidFile = join(tempDir(), 'pid');
    const stop = new AbortController();
    const outcome = checkTenantsInChild(table([['a', limited(0)]]), { ...settings, policiesModule: new URL('hanging-policies.mjs', fixtures).href }, { signal: stop.signal, env: { ...process.env, CHECK_CHILD_PID_FILE: pidFile } });
    const pid = await pidIn(pidFile);
    stop.abort();
    await expect(outcome).resolves.toEqual({ unanswered: 'aborted' });
    expect(await endsWithin(pid, 2000)).toBe(true);
  });

  // The child compiles with only microtasks between tenants: it must still turn its event loop to hear its gateway go.
  it.each(['SIGKILL', 'SIGTERM'] as const)('ends soon after its gateway is ended by %s in the middle of a long check', async (signal) => {
    const pidFile = join(tempDir(), 'pid');
    // 400 tenants of 20 ms each: ~8 s of check.
    const parent = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('parent.ts', fixtures))], { env: { ...process.env, CHECK_CHILD_PID_FILE: pidFile, TENANTS: '400' }, stdio: 'ignore' });
    children.push(parent);
    const pid = await pidIn(pidFile);
    // Into its compiles.
    await sleep(500);
    expect(alive(pid)).toBe(true);
    parent.kill(signal);
    expect(await endsWithin(pid, 2000)).toBe(true);
  }, 60_000);
});

describe('the start check child\'s node flags', () => {
  it('takes a preloaded module but not a profiler from the gateway, and runs with a small heap', async () => {
    const dir = tempDir();
    const reportFile = join(dir, 'report.json');
    const preload = fileURLToPath(new URL('report-process.cjs', fixtures));
    const env = { ...process.env, NODE_OPTIONS: `--require "${preload}" --cpu-prof --cpu-prof-dir="${dir}" --max-old-space-size=4096`, CHECK_CHILD_REPORT_FILE: reportFile };
    await expect(checkTenantsInChild(table([['a', limited(0)]]), settings, { env })).resolves.toEqual({ answer: { inCaller: [], failedAt: -1 } });
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as { pid: number; execArgv: string[]; nodeOptions: string | null; mallocArenaMax: string | null; heapLimitMiB: number };
    expect(report.pid).not.toBe(process.pid);
    expect(report.nodeOptions).toBeNull();
    expect(report.execArgv).toContain(preload);
    expect(report.execArgv.some((flag) => flag.startsWith('--cpu-prof'))).toBe(false);
    expect(report.mallocArenaMax).toBe('2');
    expect(report.heapLimitMiB).toBeLessThan(200);
    expect(readdirSync(dir).filter((file) => file.endsWith('.cpuprofile'))).toEqual([]);
  });
});
