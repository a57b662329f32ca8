// A hostile tenant's JSON-RPC batches on /mcp, on two replicas sharing one Redis (a throwaway redis-server
// of this file's own, so the commands counted are this attack's): a batch of thousands of cancellations or
// relay answers is refused whole at `mcpServer.maxBatchMessages`; what a session sends within it crosses the
// bus as one message per POST, and `mcpServer.signalRate` stops the session with 429; meanwhile another
// tenant's cheap tool and trivial run_script each answer within 1 s (docs/security-model.md#mcp-endpoint-bounds).
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { boundedRedisClient } from '../../helpers/redis.js';
import { findExecutable, startThrowawayRedis, type TestRedis } from '../../helpers/redis-server.js';
import { victimLatenciesDuring } from '../../helpers/liveness.js';

const REDIS_BINARY = findExecutable('redis-server', process.env.PATH);
/** The probe's sizes: one POST of 12,329 cancellations, one of 24,657 relay answers. */
const PROBE_CANCELS = 12_329;
const PROBE_ANSWERS = 24_657;
const BATCH = 100;

let redis: TestRedis;
const apps: FastifyInstance[] = [];
const urls: string[] = [];
let mallory: string;
let victim: string;
let victimClient: Client;

beforeAll(async () => {
  if (!REDIS_BINARY) return;
  redis = await startThrowawayRedis(REDIS_BINARY);
  const config = testConfig({
    // Room for the probe's bodies (about 1 MB each), so the batch bound, not the body limit, refuses them.
    server: { bodyLimit: 4 * 1024 * 1024 },
    store: { kind: 'redis', url: redis.url, prefix: `tg-test-bus:${randomBytes(6).toString('hex')}:` },
    tenants: {
      acme: {},
      globex: { functions: ['get_weather'], toolsets: { code: { mode: 'code', tools: ['get_weather'], sandbox: { cpuTimeMs: 250 } } } },
    },
  });
  for (let index = 0; index < 2; index += 1) {
    const app = await buildTestApp(config);
    apps.push(app);
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
  }
  mallory = await signToken({ sub: 'mallory' });
  victim = await signToken({ sub: 'victor', tenant: 'globex' });
  victimClient = new Client({ name: 'victim', version: '1.0.0' });
  await victimClient.connect(new StreamableHTTPClientTransport(new URL(`${urls[1]}/mcp/code`), { requestInit: { headers: bearer(victim) } }));
  // Warm: the first script loads the sandbox's runtime, which is no measure of the attack.
  await victimClient.callTool({ name: 'run_script', arguments: { code: 'return 1' } });
}, 60_000);
afterAll(async () => {
  await victimClient?.close();
  await Promise.all(apps.map((app) => app.close()));
  await redis?.stop();
});

const headers = (session?: string): Record<string, string> => ({
  ...bearer(mallory),
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  ...(session ? { 'mcp-session-id': session } : {}),
});

async function initialize(base: string): Promise<string> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'mallory', version: '1' } } }),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return response.headers.get('mcp-session-id')!;
}

const cancels = (count: number): unknown[] =>
  Array.from({ length: count }, (_, i) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: i } }));
/** Answers shaped like answers to toolgate's own relayed requests (ids it could have made), so none is dropped as foreign. */
const relayAnswers = (count: number): unknown[] =>
  Array.from({ length: count }, () => ({ jsonrpc: '2.0', id: `relay-${randomBytes(16).toString('base64url')}`, result: { action: 'decline' } }));

async function post(base: string, session: string, body: unknown): Promise<{ status: number; body: { error?: { code: number; message: string }; code?: string; message?: string } | undefined; retryAfter: string | null }> {
  const response = await fetch(`${base}/mcp`, { method: 'POST', headers: headers(session), body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), retryAfter: response.headers.get('retry-after') };
}

async function redisStats(): Promise<{ commands: number; publishes: number }> {
  const admin = boundedRedisClient(redis.url);
  try {
    const stats = await admin.info('stats');
    const commandStats = await admin.info('commandstats');
    const commands = Number(/total_commands_processed:(\d+)/.exec(stats)?.[1]);
    const publishes = Number(/cmdstat_publish:calls=(\d+)/.exec(commandStats)?.[1] ?? 0);
    return { commands, publishes };
  } finally {
    admin.disconnect();
  }
}

describe.skipIf(!REDIS_BINARY)('JSON-RPC batches on /mcp, two replicas on one Redis', () => {
  it("refuses the probe's batches whole with JSON-RPC -32600 before anything of them reaches the bus", async () => {
    const session = await initialize(urls[0]!);
    const before = await redisStats();
    for (const [base, body] of [
      [urls[0]!, cancels(PROBE_CANCELS)],
      [urls[1]!, relayAnswers(PROBE_ANSWERS)],
    ] as const) {
      const answer = await post(base, session, body);
      expect(answer.status).toBe(400);
      expect(answer.body?.error?.code).toBe(-32600);
      expect(answer.body?.error?.message).toContain('mcpServer.maxBatchMessages');
    }
    const after = await redisStats();
    expect(after.publishes - before.publishes).toBe(0);
    // The INFO calls themselves only: the refused batches never touched the store.
    expect(after.commands - before.commands).toBeLessThanOrEqual(4);
  });

  it('sends one bus message per POST, however many cancellations or answers it holds, and stops a session at its signal rate with 429', async () => {
    // Four sessions (within maxPerPrincipal), each sending full batches to both replicas in turn until its
    // default rate (600 per minute) stops it.
    const sessions = await Promise.all([0, 1, 0, 1].map((replica) => initialize(urls[replica]!)));
    const before = await redisStats();
    let posts = 0;
    let accepted = 0;
    let messages = 0;
    const refusals: Array<{ status: number; code?: string; retryAfter: string | null }> = [];
    for (const session of sessions) {
      for (let round = 0; round < 8; round += 1) {
        const body = round % 2 === 0 ? cancels(BATCH) : relayAnswers(BATCH);
        const answer = await post(urls[round % 2]!, session, body);
        posts += 1;
        if (answer.status === 202) {
          accepted += 1;
          messages += BATCH;
        } else refusals.push({ status: answer.status, code: answer.body?.code, retryAfter: answer.retryAfter });
      }
    }
    const after = await redisStats();
    // 600 per minute: six full batches per session taken, the rest refused with the rate's error.
    expect(accepted).toBe(4 * 6);
    expect(refusals).toHaveLength(4 * 2);
    for (const refusal of refusals) {
      expect(refusal.status).toBe(429);
      expect(refusal.code).toBe('TG_RATE_LIMITED');
      expect(Number(refusal.retryAfter)).toBeGreaterThan(0);
    }
    // At most one PUBLISH per accepted POST (the old code published each message: 2,400 here), and a
    // bounded number of commands per POST (its session's renewal, its signal count, its one publish).
    const published = after.publishes - before.publishes;
    expect(published).toBeLessThanOrEqual(accepted);
    expect(after.commands - before.commands).toBeLessThanOrEqual(40 * posts);
    expect(messages).toBe(2400);
  });

  it("keeps answering another tenant's cheap tool and trivial run_script within 1 s while the attack runs, the attack stopped at its bounds", async () => {
    const sessions = await Promise.all([0, 1].map((replica) => initialize(urls[replica]!)));
    const statuses = new Map<number, number>();
    let attacks = 0;
    const attack = async (): Promise<void> => {
      const index = attacks++;
      const base = urls[index % 2]!;
      const session = sessions[index % 2]!;
      const body = index % 3 === 0 ? cancels(PROBE_CANCELS) : index % 3 === 1 ? relayAnswers(BATCH) : cancels(BATCH);
      const { status } = await post(base, session, body);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    };
    const worst: Record<string, number> = { tool: 0, script: 0 };
    const latencies = await victimLatenciesDuring(
      attack,
      async (i) => {
        const started = performance.now();
        if (i % 2 === 0) {
          const response = await fetch(`${urls[1]}/v1/execute`, { method: 'POST', headers: { ...bearer(victim), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'get_weather', arguments: { city: 'Oslo' } }) });
          const result = (await response.json()) as { ok: boolean };
          expect(result.ok).toBe(true);
          worst.tool = Math.max(worst.tool!, performance.now() - started);
        } else {
          const result = await victimClient.callTool({ name: 'run_script', arguments: { code: 'return 1 + 1' } });
          expect(result.isError).toBeFalsy();
          worst.script = Math.max(worst.script!, performance.now() - started);
        }
      },
      { durationMs: 3000, intervalMs: 100, minCalls: 10 },
    );
    expect(Math.max(...latencies), JSON.stringify({ latencies: latencies.map(Math.round), worst, statuses: [...statuses] })).toBeLessThan(1000);
    expect(worst.tool).toBeLessThan(1000);
    expect(worst.script).toBeLessThan(1000);
    // The attack hit both bounds: oversized batches refused, and the sessions' rate spent.
    expect(statuses.get(400)).toBeGreaterThan(0);
    expect(statuses.get(429)).toBeGreaterThan(0);
    expect([...statuses.keys()].every((status) => [202, 400, 429].includes(status))).toBe(true);
  }, 30_000);
});
