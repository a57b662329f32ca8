import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable, pingRedis, provideTestRedis } from '../helpers/redis-server.js';

// The helper behind test/global-setup.ts: the suite must finish, and say why, whatever Redis the machine has.
const closedPort = async (): Promise<string> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return `redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 1}`;
};

const silentServers: Server[] = [];
const heldSockets: Socket[] = [];
afterAll(async () => {
  for (const socket of heldSockets) socket.destroy();
  await Promise.all(silentServers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const binary = findExecutable('redis-server', process.env.PATH);

describe('the test Redis helper', () => {
  it('skips with one reason naming what is missing when redis-server is not on PATH and nothing answers', async () => {
    const outcome = await provideTestRedis({ pathEnv: '/nonexistent', fallbackUrl: await closedPort(), timeoutMs: 1_000 });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).toMatch(/^no redis-server on PATH; nothing answers at redis:\/\/127\.0\.0\.1:\d+ \(install redis-server, or set TOOLGATE_TEST_REDIS_URL\)$/);
  });

  it('skips, and does not start anything, when TOOLGATE_TEST_REDIS_URL names a Redis that does not answer', async () => {
    const url = await closedPort();
    const outcome = await provideTestRedis({ explicitUrl: url, timeoutMs: 1_000 });
    expect(outcome).toEqual({ ok: false, reason: `nothing answers PING at TOOLGATE_TEST_REDIS_URL=${url}` });
  });

  it('gives up on a peer that accepts the connection but never answers, within its bound', async () => {
    const server = createServer((socket) => heldSockets.push(socket)); // holds sockets open, says nothing
    silentServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const started = Date.now();
    expect(await pingRedis(`redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 1}`, 300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.skipIf(!binary)('starts a throwaway redis-server on a free loopback port, and stops it', async () => {
    const outcome = await provideTestRedis({ fallbackUrl: await closedPort() });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const { url, origin, stop } = outcome.redis;
    expect(url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe('redis://127.0.0.1:6379');
    expect(origin).toContain('throwaway');
    expect(await pingRedis(url)).toBe(true);
    await stop();
    expect(await pingRedis(url, 500)).toBe(false);
  });
});
