// The processes of `npm run test:scale`: a throwaway redis-server, toolgate replicas and HAProxy, all
// on loopback ports of their own. Every child is tracked and killed when the run ends, however it ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { haproxyConfig } from '../../test/helpers/haproxy.js';
import { freeLoopbackPort, pingRedis } from '../../test/helpers/redis-server.js';

export { freeLoopbackPort as freePort };

const children = new Set<ChildProcess>();

/** Kills every child still running (SIGCONT first: a frozen one would not die of SIGTERM). */
export function killAll(): void {
  for (const child of children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  children.clear();
}

/** Polls `check` every 50 ms for at most `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** Starts a tracked child (killed by killAll) whose output goes to `logFile`. */
export function start(file: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Resolves when the child has exited (at once if it already has); SIGKILL after `timeoutMs`. */
export function exited(child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A program on a loopback port of its own, started by the subclass and stopped with SIGTERM. */
abstract class LoopbackDaemon {
  protected child: ChildProcess | undefined;
  constructor(
    readonly binary: string,
    readonly port: number,
    protected readonly dir: string,
  ) {}

  async stop(): Promise<void> {
    if (!this.child) return;
    this.child.kill('SIGTERM');
    await exited(this.child, 5_000);
    this.child = undefined;
  }
}

export class ThrowawayRedis extends LoopbackDaemon {

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = start(this.binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], join(this.dir, 'redis.log'));
    await waitFor('redis-server answers PING', () => pingRedis(this.url, 500), 10_000);
  }
}

export interface ReplicaSpec {
  name: string;
  port: number;
  metricsPort: number;
  configFile: string;
}

export class Replica {
  private child: ChildProcess | undefined;
  /** Every pid this replica ran as, in order (a restart the script did not ask for would add one). */
  readonly pids: number[] = [];
  constructor(
    readonly spec: ReplicaSpec,
    private readonly serverJs: string,
    private readonly logDir: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.spec.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(readyWithinMs = 20_000): Promise<void> {
    const env = { ...process.env, TOOLGATE_CONFIG: this.spec.configFile, PORT: String(this.spec.port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    this.child = start(process.execPath, [this.serverJs], join(this.logDir, `${this.spec.name}.log`), env);
    if (this.child.pid !== undefined) this.pids.push(this.child.pid);
    await waitFor(`${this.spec.name} /readyz`, async () => (await fetch(`${this.url}/readyz`)).status === 200, readyWithinMs);
  }

  /** SIGTERM (graceful drain) or SIGKILL; resolves when the process is gone. */
  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    if (!this.child) return;
    this.child.kill(signal);
    await exited(this.child);
    this.child = undefined;
  }

  async metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.spec.metricsPort}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
  }
}

/** HAProxy with the same balancing, health checks and retry rule as deploy/haproxy/haproxy.cfg, faster checks. */
export class Haproxy extends LoopbackDaemon {

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(replicas: Replica[]): Promise<void> {
    const config = haproxyConfig(this.port, replicas.map((replica) => replica.spec));
    const file = join(this.dir, 'haproxy.cfg');
    writeFileSync(file, config);
    this.child = start(this.binary, ['-db', '-f', file], join(this.dir, 'haproxy.log'));
    await waitFor('haproxy answers /readyz through a replica', async () => (await fetch(`${this.url}/readyz`)).status === 200, 10_000);
  }
}

/** One bounded request to a replica as `token`; a body that is not JSON comes back as `{ text }`. */
export async function call(url: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  try {
    return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, json: { text } };
  }
}
