// `npm start` without a config (the demo) as a new user meets it: it listens on loopback unless HOST says
// otherwise, prints its keys with the port it really got, prints them again on SIGUSR2, keeps routine reads
// out of the info log, answers GET / with where to go, and a second demo runs beside the first when the
// environment moves its listeners (PORT, METRICS_PORT) — the metrics port of a running demo is named when taken.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const children: ChildProcess[] = [];
let blocker: Server | undefined;
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  blocker?.close();
});

interface Demo {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function startDemo(env: Record<string, string>): Demo {
  const { TOOLGATE_CONFIG: _config, HOST: _host, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/server.ts')], { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = once(child, 'close').then(([code]) => code as number | null);
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

async function until<T>(what: string, demo: Demo, find: () => T | undefined, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = find();
    if (found !== undefined) return found;
    if (demo.child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`${what}: not seen; stdout: ${demo.stdout().slice(-2000)} stderr: ${demo.stderr()}`);
}

const bannerPort = (demo: Demo): number | undefined => {
  const match = /toolgate demo: tenant "demo" on http:\/\/localhost:(\d+)/.exec(demo.stdout());
  return match ? Number(match[1]) : undefined;
};

describe('the demo', () => {
  it('binds 127.0.0.1, prints its real port and keys (again on SIGUSR2), keeps reads quiet; a second demo runs beside it', { timeout: 240_000 }, async () => {
    const env = { PORT: '0', METRICS_PORT: '0', TOOLGATE_DEV_API_KEY: 'tg_demo_start_key' };
    const [first, second] = [startDemo(env), startDemo(env)];
    const ports = [await until('first banner', first, () => bannerPort(first)), await until('second banner', second, () => bannerPort(second))];
    expect(ports[0]).not.toBe(ports[1]);
    for (const [index, demo] of [first, second].entries()) {
      await until('the listening line on 127.0.0.1', demo, () => (demo.stdout().includes(`Server listening at http://127.0.0.1:${ports[index]}`) ? true : undefined));
      // Bound to 0.0.0.0, Fastify would also list the machine's other addresses.
      expect(demo.stdout()).not.toMatch(/Server listening at http:\/\/(?!127\.0\.0\.1:)/);
      const base = `http://127.0.0.1:${ports[index]}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${base}/`)).json()).toEqual({ name: 'toolgate', docs: '/docs', openapi: '/openapi.json', console: '/console/', health: '/healthz' });
      const tools = await fetch(`${base}/v1/tools`, { headers: { authorization: 'Bearer tg_demo_start_key' } });
      expect(tools.status).toBe(200);
    }
    // Successful reads are debug lines in the demo; a refused one is still an info line.
    expect((await fetch(`http://127.0.0.1:${ports[0]}/v1/tools`)).status).toBe(401);
    await until('the 401 access line', first, () => (/"statusCode":401/.test(first.stdout()) ? true : undefined));
    expect(first.stdout()).not.toMatch(/"url":"\/healthz"/);
    expect(first.stdout()).not.toMatch(/"url":"\/v1\/tools","statusCode":200/);
    // The keys, again.
    const printed = (first.stdout().match(/toolgate demo: tenant/g) ?? []).length;
    expect(first.stdout()).toContain(`these keys again: kill -USR2 ${first.child.pid}`);
    first.child.kill('SIGUSR2');
    await until('the banner again', first, () => ((first.stdout().match(/toolgate demo: tenant/g) ?? []).length > printed ? true : undefined));
    // And it goes on serving (close-with-grace would take SIGUSR2 for a shutdown).
    await sleep(500);
    expect(first.stdout()).not.toContain('shutting down');
    expect((await fetch(`http://127.0.0.1:${ports[0]}/healthz`)).status).toBe(200);
  });

  it("a taken metrics port names METRICS_PORT and how to move it (exit 69)", { timeout: 120_000 }, async () => {
    blocker = createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const taken = (blocker.address() as { port: number }).port;
    const demo = startDemo({ PORT: '0', METRICS_PORT: String(taken) });
    expect(await demo.exit).toBe(69);
    expect(demo.stderr()).toBe(
      `toolgate: cannot listen on 127.0.0.1:${taken} (metrics.port, or METRICS_PORT): address already in use (EADDRINUSE): ` +
        'set METRICS_PORT to a free port (0 picks one; metrics.enabled: false turns the listener off), or stop the process that holds it\n',
    );
  });
});
