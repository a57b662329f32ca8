// Three replicas on one machine from one unedited file (examples/configs/production.yaml) plus environment
// (docs/operations.md#several-replicas-on-one-machine): PORT and METRICS_PORT move each one's listeners, the
// file's relative module path resolves against the file, and each replica answers — the same answer. And every
// other starter config starts as a process from the environment alone.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';
import { packageRoot } from '../../src/config/demo.js';
import { findExecutable, startThrowawayRedis, type TestRedis } from '../helpers/redis-server.js';
import { startServer, type Started } from '../helpers/server-process.js';

const root = packageRoot();
const children: ChildProcess[] = [];
const redisBinary = findExecutable('redis-server', process.env.PATH);
let redis: TestRedis | undefined;

beforeAll(async () => {
  // A Redis of its own: the file's key prefix is the default one, which other tests' Redis may hold.
  if (redisBinary) redis = await startThrowawayRedis(redisBinary);
}, 30_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await redis?.stop();
});

const servingAt = async (server: Started): Promise<{ url: string; metrics: string }> => {
  const line = await server.logLine((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('toolgate is serving'));
  return { url: String(line.url), metrics: String(line.metrics) };
};

describe('several replicas on one machine', () => {
  it.skipIf(!redisBinary)('start from one file and the environment alone (ports 0), each answering the same on its own ports', { timeout: 180_000 }, async () => {
    const key = 'tg_replica_ci_key';
    const env = {
      TOOLGATE_REDIS_URL: redis!.url,
      TOOLGATE_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
      TOOLGATE_CI_KEY_SHA256: (await runCli(['hash-key'], () => Promise.resolve(key))).trim(),
      TOOLGATE_METRICS_TOKEN: 'metrics-token-of-the-replicas',
      PORT: '0',
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
    };
    const file = `${root}/examples/configs/production.yaml`;
    const replicas = await Promise.all([0, 1, 2].map(() => startServer(file, children, env)));
    const addresses = await Promise.all(replicas.map(servingAt));
    expect(new Set(addresses.map((address) => address.url)).size).toBe(3);
    expect(new Set(addresses.map((address) => address.metrics)).size).toBe(3);
    const outputs: string[] = [];
    for (const { url, metrics } of addresses) {
      // The file sheds load on a busy event loop: right after start-up a replica may say so for a sample.
      let ready = 0;
      for (let attempt = 0; attempt < 100 && ready !== 200; attempt++) {
        ready = (await fetch(`${url}/readyz`)).status;
        if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ready).toBe(200);
      const answer = await fetch(`${url}/v1/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'get_weather', arguments: { city: 'Oslo' } }),
      });
      const result = (await answer.json()) as { ok: boolean; output: string };
      expect(result.ok, JSON.stringify(result)).toBe(true);
      outputs.push(result.output);
      expect((await fetch(metrics)).status).toBe(200);
    }
    expect(new Set(outputs).size).toBe(1);
  });

  it.skipIf(!redisBinary)('every starter config in examples/configs starts as a process from the environment alone and answers', { timeout: 240_000 }, async () => {
    const hash = (await runCli(['hash-key'], () => Promise.resolve('tg_starter_key'))).trim();
    const common = { PORT: '0', METRICS_PORT: '0', TOOLGATE_API_KEY_SHA256: hash, TOOLGATE_APPROVER_KEY_SHA256: hash, TOOLGATE_JWT_SECRET: 'a-test-secret-of-at-least-32-bytes-long', TOOLGATE_REDIS_URL: redis!.url };
    const starters: Array<[string, Record<string, string>]> = [
      ['single-tenant.yaml', {}],
      ['multi-tenant-jwt.yaml', {}],
      // Its upstream is down (nothing listens on port 1): not required, so the gateway serves without it.
      ['mcp-upstreams.yaml', { NOTES_MCP_URL: 'http://127.0.0.1:1/mcp', NOTES_MCP_TOKEN: 'unused' }],
      ['compose.yaml', {}],
      ['code-mode.yaml', {}],
    ];
    const started = await Promise.all(starters.map(([name, env]) => startServer(`${root}/examples/configs/${name}`, children, { ...common, ...env })));
    for (const [index, server] of started.entries()) {
      const { url } = await servingAt(server);
      const health = await fetch(`${url}/healthz`);
      expect(health.status, starters[index]![0]).toBe(200);
    }
  });
});
