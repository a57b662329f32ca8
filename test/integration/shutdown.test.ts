// The real server process: SIGTERM lets an in-flight call finish, refuses new work, and exits 0;
// a bad config file stops start-up with a message naming the bad key.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { freePort, startServer as startServerProcess, type Started } from '../helpers/server-process.js';

const root = packageRoot();
const API_KEY = 'tg_shutdown_test_key';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-shutdown-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

async function startServer(configText: string, env: Record<string, string> = {}): Promise<Started> {
  const file = join(dir, `config-${children.length}.yaml`);
  await writeFile(file, configText);
  return startServerProcess(file, children, env);
}

const goodConfig = `
server:
  shutdownGraceMs: 8000
auth:
  apiKeys:
    - { id: t, sha256: "${sha256(API_KEY)}", tenant: acme, user: tester, roles: [admin] }
audit: { sink: "off" }
functions:
  - module: ${JSON.stringify(join(root, 'test/fixtures/functions/basic.mjs'))}
tenants:
  acme: {}
logging: { level: debug }
metrics: { port: 0 }   # any free port: a fixed one (9464) would collide between test runs
`;

describe('graceful shutdown of the real server', () => {
  it('lets an in-flight call finish after SIGTERM, refuses new work, and exits 0', { timeout: 30_000 }, async () => {
    const port = await freePort();
    const server = await startServer(goodConfig, { PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));

    const events: string[] = [];
    const inFlight = request(`${base}/v1/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'slow', arguments: { ms: 1500 } }),
    }).then(async (response) => {
      events.push('in-flight call answered');
      return { status: response.statusCode, body: (await response.body.json()) as { ok: boolean; output: string } };
    });
    inFlight.catch(() => undefined); // awaited below; a rejection must not go unhandled meanwhile
    // The server has the request (its log says so) before the signal goes out.
    await server.logLine((line) => line.msg === 'incoming request' && (line.req as { url?: string } | undefined)?.url === '/v1/execute');
    server.child.kill('SIGTERM');
    await server.logLine((line) => line.msg === 'shutting down');
    events.push('shutdown started');

    // A new connection after SIGTERM: refused, or answered 503 while the server drains.
    const fresh = new Client(base);
    try {
      const late = await fresh.request({ path: '/healthz', method: 'GET' }).then(
        async (response) => {
          await response.body.dump();
          return { status: response.statusCode };
        },
        (error: NodeJS.ErrnoException) => ({ error: error.code ?? error.message }),
      );
      // Refused by the closed listener, reset as a new idle connection, or answered 503 while draining.
      expect([{ error: 'ECONNREFUSED' }, { error: 'ECONNRESET' }, { error: 'UND_ERR_SOCKET' }, { status: 503 }]).toContainEqual(late);
    } finally {
      await fresh.close().catch(() => undefined);
    }

    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ ok: true, output: 'waited 1500' });
    expect(events).toEqual(['shutdown started', 'in-flight call answered']);

    // Exit 0 means app.close() finished inside shutdownGraceMs (close-with-grace exits 1 when the delay runs out).
    const exited = await server.exit;
    expect(server.stderr()).not.toContain('killed by timeout');
    expect(exited).toEqual({ code: 0, signal: null });
  });

  it('at the end of the grace cancels and answers every call still running (TIMEOUT "gateway shutting down"), audits each, and exits 0', { timeout: 40_000 }, async () => {
    const port = await freePort();
    const auditPath = join(dir, 'shutdown-audit.log');
    const config = goodConfig
      .replace('shutdownGraceMs: 8000', 'shutdownGraceMs: 1500\n  drainDelayMs: 400')
      .replace('audit: { sink: "off" }', `audit: { sink: file, path: ${JSON.stringify(auditPath)} }`)
      .replace('functions:', `functions:\n  - module: ${JSON.stringify(join(root, 'test/fixtures/functions/stubborn.mjs'))}`);
    const server = await startServer(config, { PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
    const post = async (path: string, body: unknown) => {
      const response = await request(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
    };

    // Calls far longer than the grace: 5 that honour their AbortSignal, 2 that ignore it, a serial batch
    // whose second call has not started when the grace ends, and an MCP tools/call.
    const singles = [
      ...Array.from({ length: 5 }, () => post('/v1/execute', { name: 'slow', arguments: { ms: 20_000 } })),
      ...Array.from({ length: 2 }, () => post('/v1/execute', { name: 'stubborn', arguments: { ms: 20_000 } })),
    ];
    const batch = post('/v1/execute/batch', { parallel: false, calls: [{ name: 'slow', arguments: { ms: 20_000 } }, { name: 'get_weather', arguments: { city: 'x' } }] });
    // The same through toolgate's own MCP endpoint.
    const mcp = request(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 20_000 } } }),
    }).then(async (response) => ({ status: response.statusCode, body: (await response.body.json()) as { result?: { isError?: boolean; content: Array<{ text: string }> } } }));
    for (const pending of [...singles, batch, mcp]) pending.catch(() => undefined); // awaited below
    const incoming = () => server.logs.filter((line) => line.msg === 'incoming request').length;
    await expect.poll(incoming, { timeout: 10_000 }).toBe(9);

    server.child.kill('SIGTERM');
    await server.logLine((line) => line.msg === 'shutting down');
    // Readiness says 503 at once, while the listener still serves (drainDelayMs).
    const ready = await request(`${base}/readyz`);
    expect(ready.statusCode).toBe(503);
    expect(await ready.body.json()).toMatchObject({ status: 'draining' });

    const shuttingDown = { errorType: 'TIMEOUT', error: 'gateway shutting down' };
    for (const answered of await Promise.all(singles)) {
      expect(answered.status).toBe(200);
      expect(answered.body).toMatchObject({ ok: false, error: shuttingDown });
    }
    const batched = await batch;
    expect(batched.status).toBe(200);
    expect((batched.body.results as Array<Record<string, unknown>>).map((result) => result.error)).toEqual([shuttingDown, shuttingDown]);
    const viaMcp = await mcp;
    expect(viaMcp.status).toBe(200);
    expect(viaMcp.body.result?.isError).toBe(true);
    expect(viaMcp.body.result?.content[0]?.text).toContain('"errorType":"TIMEOUT","error":"gateway shutting down"');

    const exited = await server.exit;
    expect(server.stderr()).not.toContain('killed by timeout');
    expect(exited).toEqual({ code: 0, signal: null });
    // One audit event per call, each with its outcome, all written before the process exited.
    const events = (await readFile(auditPath, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { tool: string; outcome: string });
    expect(events).toHaveLength(10);
    expect(events.every((event) => event.outcome === 'TIMEOUT')).toBe(true);
    expect(events.filter((event) => event.tool === 'stubborn')).toHaveLength(2);
  });

  it('refuses to start on a bad config file, naming the bad key', { timeout: 20_000 }, async () => {
    const bad = goodConfig.replace('  acme: {}', '  acme: { mode: sideways }');
    const server = await startServer(bad, { PORT: String(await freePort()) });
    const { code } = await server.exit;
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(server.stderr()).toContain('/tenants/acme/mode');
    expect(server.logs.some((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'))).toBe(false);
  });

  it('reloads on SIGHUP and on a file change (reload.watch), and refuses a broken file while the old config keeps serving', { timeout: 30_000 }, async () => {
    const port = await freePort();
    const watched = goodConfig.replace('logging: { level: debug }', 'logging: { level: debug }\nreload: { watch: true }');
    const server = await startServer(watched, { PORT: String(port) });
    const file = join(dir, `config-${children.length - 1}.yaml`);
    const base = `http://127.0.0.1:${port}`;
    await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
    const call = async () =>
      (await (await request(`${base}/v1/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'get_weather', arguments: { city: 'x' } }),
      })).body.json()) as { ok: boolean; error?: { errorType: string } };
    expect((await call()).ok).toBe(true);

    // A broken file (seen by the watcher) is refused; the old config keeps serving.
    await writeFile(file, watched.replace('tenants:', 'tenantz:'));
    await server.logLine((line) => line.trigger === 'file-watch' && line.msg === 'configuration reload refused; the previous configuration keeps serving');
    expect((await call()).ok).toBe(true);

    // A valid change applied through SIGHUP (the watcher may also see it; either way it applies once valid).
    await writeFile(file, watched.replace('  acme: {}', '  acme: { tools: { deny: [get_weather] } }'));
    server.child.kill('SIGHUP');
    await server.logLine((line) => line.trigger === 'SIGHUP' && line.msg === 'configuration reloaded');
    expect((await call()).error?.errorType).toBe('PERMISSION_DENIED');

    // A setting read only at start-up: applied nowhere, but named in a warning.
    await writeFile(file, watched.replace('  acme: {}', '  acme: { tools: { deny: [get_weather] } }').replace('tenants:', 'egress: { allow: [10.1.2.0/24] }\ntenants:'));
    server.child.kill('SIGHUP');
    const warned = await server.logLine((line) => line.trigger === 'SIGHUP' && Array.isArray(line.restartRequired));
    expect(warned).toMatchObject({ level: 40, restartRequired: ['egress.allow'], msg: 'configuration reloaded; changed settings that apply only after a restart' });

    server.child.kill('SIGTERM');
    expect(await server.exit).toEqual({ code: 0, signal: null });
  });
});
