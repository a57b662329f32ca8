// A hostile tenant parks calls for approval with large arguments, as fast as it can, while another tenant
// keeps calling a cheap tool and a trivial run_script: the flood stops at its bounds (VALIDATION_ERROR for
// arguments too large to park, RATE_LIMITED past the pending counts), the approver's listing is paged and
// small, metrics scrapes stay cheap, and the other tenant is answered within a second throughout. The
// gateway runs as its own process (the built dist/src/server.js), so the RSS read is the gateway's alone
// (the kernel's high-water mark, VmHWM), not the test's own 1 MB request bodies nor tsx's compiler.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { bearer, JWT_SECRET, signToken } from '../helpers/build.js';
import { whileAttacked } from '../helpers/liveness.js';
import { freePort, startServer } from '../helpers/server-process.js';
import { builtServer } from '../helpers/built-server.js';

const agent = new Agent({ connections: 32 });
const children: ChildProcess[] = [];
let dir: string;
let base: string;
let pid: number;
const tokens: Record<string, string> = {};
const METRICS_TOKEN = 'metrics-token-for-the-flood-test';

const FLOOD_CALLS = 150;
const USERS = 15;
const PER_USER = 20; // maxPendingPerUser (the default)
const PER_TENANT = 200; // maxPendingPerTenant (the default)

beforeAll(async () => {
  // What ships: dist/ built from these sources (test/helpers/built-server.ts).
  await builtServer();
  dir = await mkdtemp(join(tmpdir(), 'toolgate-approval-flood-'));
  const fixture = (name: string) => ({ module: join(packageRoot(), 'test/fixtures/functions', name) });
  const config = {
    auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' } },
    audit: { sink: 'off' },
    logging: { level: 'info' },
    metrics: { port: 0, token: METRICS_TOKEN },
    functions: [fixture('basic.mjs'), fixture('governed.mjs'), fixture('code-mode.mjs')],
    tenants: {
      acme: { policies: { approval: { tools: ['create_ticket'], expiresMs: 600_000 } } },
      globex: { toolsets: { code: { mode: 'code', tools: ['add'], sandbox: { cpuTimeMs: 1000, wallTimeMs: 5000 } } } },
    },
  };
  const file = join(dir, 'toolgate.yaml');
  await writeFile(file, JSON.stringify(config));
  const port = await freePort();
  // V8 sizes the young generation from the machine's memory: semi-spaces of up to 64 MiB on Node 24 on a
  // 24 GiB machine (16 on Node 20), 2 MiB inside the Deployment's 512 Mi limit (docs/configuration.md, "Memory at 100,000 file tenants").
  // Pinned to 16 MiB so the bound below measures what the flood holds, not how large V8 lets its nursery grow.
  // The old generation likewise: V8's heap limit is 4,288 MB on this machine (Node 24), so a peak measured how
  // much of the flood's garbage (each refused 1 MB body is a few MB of strings) V8 let build before a major
  // collection: a growth of 143-252 MB in runs here and in CI. Capped at 192 MB, the peak is what is held
  // (112-119 MB on Node 24, 53 on Node 20, here); 150 bodies kept would take 150 MB of those 192.
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=16 --max-old-space-size=192`.trim();
  const server = await startServer(file, children, { PORT: String(port), LOG_LEVEL: 'info', NODE_OPTIONS: nodeOptions }, { built: true });
  await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
  base = `http://127.0.0.1:${port}`;
  pid = server.child.pid!;
  for (let i = 0; i < USERS; i += 1) tokens[`m${i}`] = await signToken({ sub: `mallory-${i}` });
  tokens.approver = await signToken({ sub: 'boss', roles: ['approver'] });
  tokens.victim = await signToken({ sub: 'vic', tenant: 'globex' });
  // Warm: the sandbox workers start with the first script, not during the attack.
  for (let i = 0; i < 2; i += 1) await call(tokens.victim, 'POST', '/v1/execute', { name: 'run_script', toolset: 'code', arguments: { code: 'return 1 + 1' } });
}, 240_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await agent.close();
  await rm(dir, { recursive: true, force: true });
});

/** The gateway process's resident set: now and its peak so far (MB). */
async function rssOf(processId: number): Promise<{ now: number; peak: number }> {
  const status = await readFile(`/proc/${processId}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; bytes: number; ms: number }> {
  const started = performance.now();
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    dispatcher: agent,
    headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, bytes: text.length, ms: performance.now() - started };
}

async function scrape(): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const res = await request(`${base}/metrics`, { dispatcher: agent, headers: bearer(METRICS_TOKEN) });
  const text = await res.body.text();
  return { text, ms: performance.now() - started };
}

/** Runs `attack` while the victim calls a cheap tool and a trivial run_script every 100 ms; answers each victim call's time. */
async function victimDuring(attack: () => Promise<void>): Promise<{ cheap: number[]; script: number[] }> {
  const cheap: number[] = [];
  const script: number[] = [];
  await whileAttacked(attack, async () => {
    const weather = await call(tokens.victim!, 'POST', '/v1/execute', { name: 'get_weather', arguments: { city: 'Oslo' } });
    expect(weather.json.ok, JSON.stringify(weather.json)).toBe(true);
    cheap.push(weather.ms);
    const run = await call(tokens.victim!, 'POST', '/v1/execute', { name: 'run_script', toolset: 'code', arguments: { code: 'return 1 + 1' } });
    expect(run.json.ok, JSON.stringify(run.json)).toBe(true);
    script.push(run.ms);
  });
  return { cheap, script };
}

/** `count` calls of `send`, at most `parallel` at once. */
async function flood<T>(count: number, parallel: number, send: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await send(i);
      }
    }),
  );
  return results;
}

describe('a flood of calls waiting for approval', () => {
  it('stops at its bounds with clear errors, keeps RSS bounded, pages the approver, and the other tenant stays live', async () => {
    const before = await rssOf(pid);
    // Serialized once: the test process must not spend the victim's time building 150 MB of JSON.
    const hugeBody = JSON.stringify({ name: 'create_ticket', arguments: { title: 'x'.repeat(1_000_000) } });
    const large = 'y'.repeat(60_000);
    let hugeAnswers: Array<{ status: number; json: Record<string, unknown> }> = [];
    let countAnswers: Array<{ status: number; json: Record<string, unknown> }> = [];
    const pages: Array<{ status: number; json: Record<string, unknown>; bytes: number; ms: number }> = [];
    const scrapes: number[] = [];
    const latencies = await victimDuring(async () => {
      // 1 MB arguments: never parked.
      hugeAnswers = await flood(FLOOD_CALLS, 8, (i) => call(tokens[`m${i % USERS}`]!, 'POST', '/v1/execute', hugeBody));
      // 60 kB arguments (under the size bound) from 15 users, 20 each: parked up to the tenant's count.
      countAnswers = await flood(USERS * (PER_USER + 2), 8, (i) => call(tokens[`m${i % USERS}`]!, 'POST', '/v1/execute', { name: 'create_ticket', arguments: { title: `${i}${large}` } }));
      for (let i = 0; i < 3; i += 1) scrapes.push((await scrape()).ms);
      // The approver walks every page of the pending list.
      let cursor: string | undefined;
      for (let i = 0; i < 20; i += 1) {
        const page = await call(tokens.approver!, 'GET', `/v1/approvals?status=pending${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        pages.push(page);
        cursor = page.json.nextCursor as string | undefined;
        if (!cursor) break;
      }
    });
    const after = await rssOf(pid);

    expect(hugeAnswers.map((answer) => answer.status)).toEqual(Array(FLOOD_CALLS).fill(200));
    expect(hugeAnswers.every((answer) => (answer.json.error as { errorType: string }).errorType === 'VALIDATION_ERROR')).toBe(true);
    expect(JSON.stringify(hugeAnswers[0]!.json.error)).toContain('approval.maxArgumentsBytes');
    const parked = countAnswers.filter((answer) => answer.status === 202);
    const refused = countAnswers.filter((answer) => answer.status === 429);
    expect(parked).toHaveLength(PER_TENANT);
    expect(refused).toHaveLength(countAnswers.length - PER_TENANT);
    expect(refused.every((answer) => (answer.json.error as { errorType: string }).errorType === 'RATE_LIMITED')).toBe(true);

    const listed = pages.flatMap((page) => page.json.approvals as Array<Record<string, unknown>>);
    expect(listed).toHaveLength(PER_TENANT);
    expect(new Set(listed.map((approval) => approval.id)).size).toBe(PER_TENANT);
    expect(pages.length).toBe(4); // 50 a page by default
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.ms).toBeLessThan(500);
      expect(page.bytes).toBeLessThan(200_000);
    }
    expect(listed[0]).toMatchObject({ argumentsBytes: expect.any(Number), argumentsSha256: expect.stringMatching(/^[0-9a-f]{64}$/), argumentsPreview: expect.any(String) });
    expect(listed[0]).not.toHaveProperty('arguments');
    // The whole arguments are one GET away.
    const one = await call(tokens.approver!, 'GET', `/v1/approvals/${listed[0]!.id as string}`);
    expect((one.json.arguments as { title: string }).title).toHaveLength(60_000 + String(0).length);

    expect(Math.max(...scrapes)).toBeLessThan(200);
    expect((await scrape()).text).toContain(`toolgate_approvals_pending{tenant="acme"} ${PER_TENANT}`);
    // What the flood may add to the gateway's resident set: its 1 MB bodies are refused, 200 calls of 60 kB
    // park, and the rest is garbage the collector takes back. The idle gateway itself (code-mode workers
    // started) is 215-270 MB here depending on Node (20 or 24), so the bound is on the growth (53-119 MB
    // seen on Node 20 and 24 with the pinned heap; its 150 bodies of 1 MB, kept, would add 150 MB more).
    expect(after.peak - before.now, `gateway RSS ${before.now.toFixed(0)} MB before the flood, peak ${after.peak.toFixed(0)} MB`).toBeLessThan(250);
    expect(Math.max(...latencies.cheap), JSON.stringify(latencies.cheap)).toBeLessThan(1000);
    expect(Math.max(...latencies.script), JSON.stringify(latencies.script)).toBeLessThan(1000);
  }, 120_000);
});
