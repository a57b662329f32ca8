// The real server process (src/server.ts under tsx) for tests of what only a process shows: signals,
// exit codes, Node's own module resolution.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../../src/config/demo.js';
import { loadConfigFile } from '../../src/config/load.js';

const root = packageRoot();

/** A port that was free a moment ago (the server does not print the one it gets for PORT=0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface Started {
  child: ChildProcess;
  logs: Array<Record<string, unknown>>;
  /** Resolves with the first log line the predicate accepts (already seen or still to come). */
  logLine: (match: (line: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/**
 * Runs src/server.ts (through tsx) on the config file `file`, or with `built` the compiled dist/src/server.js
 * (`npm run build`); `children` collects it for cleanup.
 */
export async function startServer(file: string, children: ChildProcess[], env: Record<string, string> = {}, options: { built?: boolean; allowFixedMetricsPort?: boolean } = {}): Promise<Started> {
  // Tests never bind fixed ports: the metrics listener's default (9464) collides with a running demo and
  // with other test runs. A config that leaves it on is refused here, unless the test is about that port.
  // A file that does not load is the server's to report (tests of bad configs).
  const metrics = await loadConfigFile(file, { ...process.env, ...env }).then((config) => config.metrics, () => undefined);
  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : metrics?.port;
  if (metrics?.enabled && metricsPort !== 0 && !options.allowFixedMetricsPort) {
    throw new Error(`${file}: set metrics: { port: 0 } or { enabled: false } (the listener would bind the fixed port ${metrics.port})`);
  }
  const args = options.built ? [join(root, 'dist/src/server.js')] : ['--import', 'tsx', join(root, 'src/server.ts')];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, TOOLGATE_CONFIG: file, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exit = once(child, 'close').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<{ match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    logs.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.match(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const logLine = (match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    const seen = logs.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      waiters.push({ match, resolve });
      void exit.then(() => reject(new Error(`server exited before the expected log line; stderr: ${stderr}`)));
    });
  };
  return { child, logs, logLine, exit, stderr: () => stderr };
}
