import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** A Redis the tests may use, and how to let go of it. */
export interface TestRedis {
  url: string;
  /** How it was found, for the one line the suite prints. */
  origin: string;
  stop(): Promise<void>;
}

export type TestRedisOutcome = { ok: true; redis: TestRedis } | { ok: false; reason: string };

export interface TestRedisOptions {
  /** Search path for `redis-server` (default `process.env.PATH`). */
  pathEnv?: string;
  /** A Redis the caller names (`TOOLGATE_TEST_REDIS_URL`): used as is, never replaced by a throwaway one. */
  explicitUrl?: string;
  /** Tried when there is no `redis-server` binary: the machine's Redis, when it is up. */
  fallbackUrl?: string;
  /** Bound on every connect and on the throwaway server's start-up. */
  timeoutMs?: number;
}

const DEFAULT_FALLBACK = 'redis://127.0.0.1:6379';

/** The first executable `name` on `pathEnv`, like `which`. */
export function findExecutable(name: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** True when a Redis answers PING at `url` within `timeoutMs`; never retries, never hangs. */
export function pingRedis(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 6379) });
    let reply = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts `binary` on a free loopback port with no persistence, in its own temporary folder.
 * The port is picked before the server binds it, so another process can take it in between: a
 * server that exits at start-up is retried on a fresh port, a bounded number of times.
 */
export async function startThrowawayRedis(binary: string, timeoutMs = 5_000): Promise<TestRedis> {
  let lastError = 'no attempt';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freeLoopbackPort();
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-test-redis-'));
    const child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 2_000) stderr += chunk.toString();
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    child.once('error', (error) => {
      exited = true;
      lastError = error.message;
    });
    const url = `redis://127.0.0.1:${port}`;
    const deadline = Date.now() + timeoutMs;
    while (!exited && Date.now() < deadline) {
      if (await pingRedis(url, 500)) {
        const stop = async () => {
          await stopChild(child, 2_000);
          rmSync(dir, { recursive: true, force: true });
        };
        return { url, origin: `a throwaway ${binary} at ${url}`, stop };
      }
      await sleep(50);
    }
    await stopChild(child, 2_000);
    rmSync(dir, { recursive: true, force: true });
    lastError = exited ? `exited at start-up${stderr ? `: ${stderr.trim()}` : ''}` : `did not answer PING within ${timeoutMs} ms`;
  }
  throw new Error(`${binary} could not be started: ${lastError}`);
}

const borrowed = (url: string, origin: string): TestRedis => ({ url, origin, stop: async () => undefined });

/**
 * The Redis the suite's Redis tests run against, or why there is none:
 * `TOOLGATE_TEST_REDIS_URL` when set (and only that); else a throwaway `redis-server` when the binary
 * is on PATH (so the suite never depends on, or writes into, the machine's Redis); else the machine's
 * Redis at 127.0.0.1:6379 when it answers. Every probe is bounded, so a missing Redis costs at most
 * `timeoutMs`, never a hang.
 */
export async function provideTestRedis(options: TestRedisOptions = {}): Promise<TestRedisOutcome> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  if (options.explicitUrl) {
    return (await pingRedis(options.explicitUrl, timeoutMs))
      ? { ok: true, redis: borrowed(options.explicitUrl, `TOOLGATE_TEST_REDIS_URL=${options.explicitUrl}`) }
      : { ok: false, reason: `nothing answers PING at TOOLGATE_TEST_REDIS_URL=${options.explicitUrl}` };
  }
  const binary = findExecutable('redis-server', options.pathEnv ?? process.env.PATH);
  let startFailure = '';
  if (binary) {
    try {
      return { ok: true, redis: await startThrowawayRedis(binary, timeoutMs) };
    } catch (error) {
      startFailure = `${(error as Error).message}; `;
    }
  }
  const fallback = options.fallbackUrl ?? DEFAULT_FALLBACK;
  if (await pingRedis(fallback, Math.min(timeoutMs, 1_000))) return { ok: true, redis: borrowed(fallback, `the Redis already running at ${fallback}`) };
  const missing = binary ? startFailure : 'no redis-server on PATH; ';
  return {
    ok: false,
    reason: `${missing}nothing answers at ${fallback} (install redis-server, or set TOOLGATE_TEST_REDIS_URL)`,
  };
}
