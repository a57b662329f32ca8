// The Redis store when Redis does not answer: every operation fails within a bound with
// TG_STORE_UNAVAILABLE (nothing waits on a dead connection, nothing is queued to run later), the store
// says when it went down and came back, and it reconnects by itself. Runs its own redis-server on a
// free loopback port (never the machine's Redis), so it can stop, freeze and restart it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import { findExecutable, freeLoopbackPort as freePort, pingRedis } from '../../helpers/redis-server.js';

const binary = findExecutable('redis-server', process.env.PATH);
if (!binary) console.warn('redis-unavailable.test: no redis-server on PATH; skipping (apt-get install -y redis-server)');

const UNAVAILABLE = { code: 'TG_STORE_UNAVAILABLE', statusCode: 503 };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms for at most `timeoutMs`; true when it held. */
async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

const running: ChildProcess[] = [];
const dirs: string[] = [];
const stores: StateStore[] = [];

async function startRedis(port: number): Promise<ChildProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-down-'));
  dirs.push(dir);
  const child = spawn(binary!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'], { stdio: 'ignore' });
  running.push(child);
  expect(await eventually(() => pingRedis(`redis://127.0.0.1:${port}`, 300))).toBe(true);
  return child;
}

function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  });
}

function store(port: number, extra: Partial<Parameters<typeof createRedisStore>[0]> = {}): StateStore {
  const created = createRedisStore({ url: `redis://127.0.0.1:${port}`, prefix: 'tg-store-down:', ...extra });
  stores.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(running.splice(0).map(stopRedis));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!binary)('the Redis store when Redis does not answer', () => {
  it('fails every operation within commandTimeoutMs with TG_STORE_UNAVAILABLE while nothing listens, and counts each', async () => {
    const failed: string[] = [];
    const s = store(await freePort(), { commandTimeoutMs: 200, onUnavailable: (operation) => failed.push(operation) });
    const started = Date.now();
    await expect(s.get('a')).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.set('a', '1')).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.setIfAbsent('a', '1')).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.compareAndSet('a', '1', '2')).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.delete('a')).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.scan('a')).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.hitWindow('a', 1, 1000)).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.pushCapped('a', '1', 10)).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.recent('a', 10)).rejects.toMatchObject(UNAVAILABLE);
    const lease = { id: 'l', record: { key: 'r', value: 'v' }, ttlMs: 1000 };
    await expect(s.acquireLease({ ...lease, own: { key: 'o', limit: 1, recordPrefix: 'r' }, shared: { key: 's', limit: 1 } })).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.renewLease({ ...lease, groups: ['o', 's'] })).rejects.toMatchObject(UNAVAILABLE);
    await expect(s.releaseLease({ ...lease, groups: ['o', 's'] })).rejects.toMatchObject(UNAVAILABLE);
    expect(Date.now() - started).toBeLessThan(9 * 200 + 1_000); // liveness: at most commandTimeoutMs each, never a hang
    expect(failed).toEqual(['get', 'set', 'setIfAbsent', 'compareAndSet', 'delete', 'scan', 'hitWindow', 'pushCapped', 'recent', 'acquireLease', 'renewLease', 'releaseLease']);
    expect(s.up?.()).toBe(false);
  });

  it('gives up on a Redis that stops answering after commandTimeoutMs, and answers again when it resumes', async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    const s = store(port, { commandTimeoutMs: 200 });
    expect(await eventually(() => s.up?.() === true)).toBe(true);
    await s.set('k', 'v');
    redis.kill('SIGSTOP');
    const started = Date.now();
    await expect(s.get('k')).rejects.toMatchObject(UNAVAILABLE);
    expect(Date.now() - started).toBeLessThan(1_500);
    redis.kill('SIGCONT');
    expect(await eventually(async () => (await s.get('k').catch(() => null)) === 'v')).toBe(true);
  });

  it('reconnects by itself when Redis comes back, and says once when it went down and once when it is back', async () => {
    const port = await freePort();
    const states: boolean[] = [];
    let redis = await startRedis(port);
    const s = store(port, { onStateChange: (up) => states.push(up) });
    expect(await eventually(() => s.up?.() === true)).toBe(true);
    await s.set('k', 'before');

    await stopRedis(redis);
    expect(await eventually(() => s.up?.() === false)).toBe(true);
    await expect(s.set('k', 'during')).rejects.toMatchObject(UNAVAILABLE);
    await sleep(1_200); // several failed reconnects: still one "down"

    redis = await startRedis(port);
    expect(await eventually(async () => (await s.set('k', 'after').then(() => true, () => false)))).toBe(true);
    expect(await s.get('k')).toBe('after'); // a fresh Redis: 'during' was never queued and replayed
    expect(states).toEqual([true, false, true]);
  });

  it('at start-up, waits for the first connection instead of failing the first operations', async () => {
    const port = await freePort();
    await startRedis(port);
    const s = store(port);
    expect(s.up?.()).toBe(false);
    await s.set('early', 'v'); // made before the connection is ready
    expect(await s.get('early')).toBe('v');
  });

  it('lets a Redis reply error through unchanged (a bug, not an outage)', async () => {
    const port = await freePort();
    await startRedis(port);
    const failed: string[] = [];
    const s = store(port, { onUnavailable: (operation) => failed.push(operation) });
    await s.set('string-key', 'v');
    const error = await s.hitWindow('string-key', 1, 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/WRONGTYPE/);
    expect((error as { code?: string }).code).not.toBe('TG_STORE_UNAVAILABLE');
    expect(failed).toEqual([]);
  });
});
