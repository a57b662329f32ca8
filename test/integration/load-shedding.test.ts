// Honest answers under pressure (server.loadShedding): a replica whose event loop is saturated answers 503
// TG_OVERLOADED with Retry-After before doing the work, /readyz says `shedding`, and a second replica keeps
// answering — directly and through HAProxy (health-checked on /readyz, retrying a 503 elsewhere, as
// deploy/haproxy/haproxy.cfg does). Real processes on loopback ports of their own; every loop is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haproxyConfig } from '../helpers/haproxy.js';
import { findExecutable, freeLoopbackPort } from '../helpers/redis-server.js';
import { startServer, type Started } from '../helpers/server-process.js';

const KEY = 'tg_load_shedding_key';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const haproxyBinary = findExecutable('haproxy', `${process.env.PATH ?? ''}:/usr/sbin:/usr/local/sbin`);
const children: ChildProcess[] = [];
let dir: string;
let haproxy: { url: string; child: ChildProcess } | undefined;

const TOOLS = `
export default [
  { name: 'spin', description: 'Keeps the event loop busy', inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } },
    handler: ({ ms }) => { const end = performance.now() + ms; while (performance.now() < end); return 'spun'; } },
  { name: 'ping', description: 'Answers pong', inputSchema: { type: 'object', properties: {} }, readOnly: true, handler: () => 'pong' },
];
`;
const CONFIG = `
server:
  loadShedding: { maxEventLoopDelayMs: 150, maxEventLoopUtilization: 0.95, sampleIntervalMs: 100, retryAfterSec: 2 }
  maxConnectionsPerAddress: 0
auth:
  apiKeys: [{ id: k, sha256: "${sha256(KEY)}", tenant: acme, user: tester, roles: [] }]
audit: { sink: "off" }
metrics: { enabled: false }
logging: { level: warn }
functions: [{ module: ./tools.mjs }]
tenants: { acme: { limits: { maxInFlight: 512 } } }
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-load-shedding-'));
  await writeFile(join(dir, 'tools.mjs'), TOOLS);
  await writeFile(join(dir, 'config.yaml'), CONFIG);
});
afterAll(async () => {
  haproxy?.child.kill('SIGKILL');
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

async function replica(port: number): Promise<{ server: Started; url: string }> {
  const server = await startServer(join(dir, 'config.yaml'), children, { PORT: String(port), LOG_LEVEL: 'warn' });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if ((await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200) return { server, url };
    await sleep(100);
  }
  throw new Error(`replica on ${port} not ready; stderr: ${server.stderr()}`);
}

const execute = async (url: string, name: string, args: Record<string, unknown> = {}) => {
  const started = performance.now();
  const response = await fetch(`${url}/v1/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, arguments: args }),
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, retryAfter: response.headers.get('retry-after'), requestId: response.headers.get('x-request-id'), body, ms: performance.now() - started };
};

describe('load shedding', () => {
  it('a saturated replica answers 503 + Retry-After early and reports shedding; the other keeps answering, directly and behind HAProxy', { timeout: 180_000 }, async () => {
    const [portA, portB] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const [a, b] = await Promise.all([replica(portA), replica(portB)]);
    if (haproxyBinary) {
      const port = await freeLoopbackPort();
      await writeFile(join(dir, 'haproxy.cfg'), haproxyConfig(port, [{ name: 'a', port: portA }, { name: 'b', port: portB }]));
      haproxy = { url: `http://127.0.0.1:${port}`, child: spawn(haproxyBinary, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' }) };
      children.push(haproxy.child);
      let up = false;
      for (let attempt = 0; attempt < 100 && !up; attempt++) {
        up = (await fetch(`${haproxy.url}/readyz`).catch(() => undefined))?.status === 200;
        if (!up) await sleep(100);
      }
      expect(up, 'haproxy answers /readyz through a replica').toBe(true);
    }

    // Saturate A for a bounded time: four clients each sending 400 ms of synchronous work, back to back.
    const until = Date.now() + 4_000;
    const onA: Array<Awaited<ReturnType<typeof execute>>> = [];
    const saturate = async () => {
      while (Date.now() < until) onA.push(await execute(a.url, 'spin', { ms: 400 }));
    };
    const readiness: string[] = [];
    const watchReadiness = async () => {
      while (Date.now() < until) {
        const answer = await fetch(`${a.url}/readyz`, { signal: AbortSignal.timeout(10_000) });
        readiness.push(`${answer.status} ${((await answer.json()) as { status: string }).status}`);
        await sleep(100);
      }
    };
    const elsewhere: Array<{ where: string; status: number; ms: number }> = [];
    const keepCalling = async (where: string, url: string) => {
      while (Date.now() < until) {
        const { status, ms } = await execute(url, 'ping');
        elsewhere.push({ where, status, ms });
        await sleep(50);
      }
    };
    await Promise.all([
      ...[0, 1, 2, 3].map(saturate),
      watchReadiness(),
      keepCalling('B', b.url),
      ...(haproxy ? [keepCalling('haproxy', haproxy.url)] : []),
    ]);

    const shed = onA.filter((answer) => answer.status === 503);
    expect(shed.length, JSON.stringify(onA.map((answer) => answer.status))).toBeGreaterThan(0);
    for (const answer of shed) {
      expect(answer.retryAfter).toBe('2');
      // Shed before any route hook runs, still with the request's id.
      expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.body).toMatchObject({ statusCode: 503, code: 'TG_OVERLOADED' });
    }
    // Refused before the work: a shed answer never waited for a spin of its own.
    expect(Math.min(...shed.map((answer) => answer.ms))).toBeLessThan(400);
    expect(onA.some((answer) => answer.status === 200)).toBe(true);
    expect(readiness).toContain('503 shedding');
    // The other replica, and the balancer in front of both, answered every call, each within a second.
    expect(elsewhere.filter((call) => call.where === 'B').length).toBeGreaterThan(5);
    if (haproxy) expect(elsewhere.filter((call) => call.where === 'haproxy').length).toBeGreaterThan(5);
    // Through the balancer, a call routed to the saturated replica before its health check failed (checks every
    // 250 ms, two to fail) waits for that replica's busy loop (four 400 ms spins): answered, but not within 1 s.
    for (const call of elsewhere) {
      expect(call.status, call.where).toBe(200);
      expect(call.ms, call.where).toBeLessThan(call.where === 'haproxy' ? 2_500 : 1_000);
    }
    // Once the load is gone the replica is ready again.
    let ready = '';
    for (let attempt = 0; attempt < 50 && ready !== '200'; attempt++) {
      ready = String((await fetch(`${a.url}/readyz`)).status);
      await sleep(100);
    }
    expect(ready).toBe('200');
  });
});
