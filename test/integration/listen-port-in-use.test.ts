// The real server process when a port it needs is taken (a second gateway, or the demo already running):
// one line on stderr naming the address and the setting, exit 69, and no "listening" line before it.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../helpers/server-process.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
let dir: string;
let taken: Server;
let takenPort: number;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-port-in-use-'));
  taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  taken.close();
  await rm(dir, { recursive: true, force: true });
});

const config = (metricsPort: number) => `
auth:
  apiKeys: [{ id: t, sha256: "${sha256('tg_port_test')}", tenant: acme, user: tester, roles: [] }]
audit: { sink: "off" }
tenants: { acme: {} }
metrics: { host: 127.0.0.1, port: ${metricsPort} }
`;

async function startOn(name: string, metricsPort: number, apiPort: number) {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, config(metricsPort));
  const server = await startServer(file, children, { PORT: String(apiPort) }, { allowFixedMetricsPort: true });
  const { code } = await server.exit;
  return { code, stderr: server.stderr(), logs: server.logs };
}

describe('a port in use at start-up', () => {
  it('on the metrics listener: one line naming metrics.port and METRICS_PORT, how to move it, exit 69, no listening line', { timeout: 60_000 }, async () => {
    const { code, stderr, logs } = await startOn('metrics', takenPort, 0);
    expect(code).toBe(69);
    expect(stderr).toBe(
      `toolgate: cannot listen on 127.0.0.1:${takenPort} (metrics.port, or METRICS_PORT): address already in use (EADDRINUSE): ` +
        'set METRICS_PORT to a free port (0 picks one; metrics.enabled: false turns the listener off), or stop the process that holds it\n',
    );
    expect(logs.filter((line) => /listening|listener/i.test(String(line.msg)))).toEqual([]);
  });

  it('on the API port: one line naming server.port, exit 69, no listening line (the metrics listener it bound first is closed)', { timeout: 60_000 }, async () => {
    const { code, stderr, logs } = await startOn('api', 0, takenPort);
    expect(code).toBe(69);
    expect(stderr).toBe(
      `toolgate: cannot listen on 127.0.0.1:${takenPort} (server.port, or PORT): address already in use (EADDRINUSE): set PORT to a free port (0 picks one), or stop the process that holds it\n`,
    );
    expect(logs.filter((line) => /listening|listener/i.test(String(line.msg)))).toEqual([]);
  });
});
