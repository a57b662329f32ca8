// One user calls a slow tool as MCP tasks with the shortest ttl (1 s), wave after wave, and then several
// users of the tenant do the same, while another tenant calls a cheap tool and a trivial run_script every
// 100 ms: a task whose record expired still holds its place until its call ends, so the user stays at
// mcpServer.tasks.maxPerUser running calls and the tenant at limits.maxInFlight, each refusal saying which
// bound, and the other tenant is answered within a second throughout.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { governedState } from '../helpers/governed.js';
import { executorFor, whileAttacked, type Execute } from '../helpers/liveness.js';
import { connectTaskClient } from '../helpers/mcp-tasks.js';

const PER_USER = 10;
const TENANT_IN_FLIGHT = 24;
const agent = new Agent({ connections: 16 });
let app: FastifyInstance;
let base: string;
let execute: Execute;
let victim: string;
const clients: Client[] = [];

beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      functions: [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/governed.mjs' }, { module: './test/fixtures/functions/code-mode.mjs' }],
      mcpServer: { tasks: { maxPerUser: PER_USER } },
      tenants: {
        acme: { limits: { maxInFlight: TENANT_IN_FLIGHT } },
        globex: { toolsets: { code: { mode: 'code', tools: ['add'], sandbox: { cpuTimeMs: 1000, wallTimeMs: 5000 } } } },
      },
    }),
  );
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  execute = executorFor(base, agent);
  victim = await signToken({ sub: 'vic', tenant: 'globex' });
  // Warm: the sandbox workers start with the first script, not during the attack.
  for (let i = 0; i < 2; i += 1) await executeIn('code', 'run_script', { code: 'return 1' });
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await app?.close();
  await agent.close();
});

/** The slow_read calls of this file running now: started and neither ended nor aborted. */
function running(): number {
  const events = governedState().events.filter((event) => / cap-/.test(event));
  return events.filter((event) => event.startsWith('start ')).length - events.filter((event) => !event.startsWith('start ')).length;
}

/** Runs `work`, at most `parallel` at once; answers in order. */
async function atMost<T>(parallel: number, work: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < work.length) {
        const i = next++;
        results[i] = await work[i]!();
      }
    }),
  );
  return results;
}

/** A task-augmented tools/call with the shortest ttl; answers 'task' or the refusal's message. */
async function shortTask(client: Client, id: string): Promise<string> {
  try {
    await client.request({ method: 'tools/call', params: { name: 'slow_read', arguments: { id, ms: 20_000 }, task: { ttl: 1000 } } }, CreateTaskResultSchema);
    return 'task';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

describe('task calls with a short ttl', () => {
  it("hold their user's and their tenant's places until the call ends, and the other tenant stays live", async () => {
    const victimTimes: number[] = [];
    const victimRound = async () => {
      for (const [name, args] of [['get_weather', { city: 'Oslo' }], ['run_script', { code: 'return 1 + 1' }]] as const) {
        const answer = name === 'run_script' ? await executeIn('code', name, args) : await execute(victim, name, args);
        expect(answer.body.ok, JSON.stringify(answer.body)).toBe(true);
        victimTimes.push(answer.ms);
      }
    };
    const refusals: string[] = [];
    let peakOne = 0;
    let peakAll = 0;
    await whileAttacked(async () => {
      const mallory = await connectTaskClient(base, await signToken({ sub: 'mallory' }), 'mallory');
      clients.push(mallory);
      // Three waves, each after the previous tasks' records expired (ttl 1 s).
      for (let wave = 0; wave < 3; wave += 1) {
        const answers = await atMost(8, Array.from({ length: PER_USER + 5 }, (_, i) => () => shortTask(mallory, `cap-m-${wave}-${i}`)));
        refusals.push(...answers.filter((answer) => answer !== 'task'));
        await new Promise((resolve) => setTimeout(resolve, 1500));
        peakOne = Math.max(peakOne, running());
      }
      expect(peakOne).toBe(PER_USER);
      // Four more users, each under their own bound: together past the tenant's.
      const others = await Promise.all([1, 2, 3, 4].map(async (n) => connectTaskClient(base, await signToken({ sub: `mob-${n}` }), `mob-${n}`)));
      clients.push(...others);
      for (let wave = 0; wave < 2; wave += 1) {
        const answers = await atMost(8, others.flatMap((client, n) => Array.from({ length: PER_USER }, (_, i) => () => shortTask(client, `cap-${n}-${wave}-${i}`))));
        refusals.push(...answers.filter((answer) => answer !== 'task'));
        await new Promise((resolve) => setTimeout(resolve, 1500));
        peakAll = Math.max(peakAll, running());
      }
    }, victimRound);

    expect(peakOne).toBe(PER_USER);
    expect(peakAll).toBeLessThanOrEqual(TENANT_IN_FLIGHT);
    expect(peakAll).toBeGreaterThan(PER_USER);
    expect(refusals.some((message) => message.includes('mcpServer.tasks.maxPerUser'))).toBe(true);
    expect(refusals.some((message) => /limits\.maxInFlight|calls in flight/.test(message))).toBe(true);
    expect(Math.max(...victimTimes), JSON.stringify(victimTimes)).toBeLessThan(1000);
  }, 60_000);
});

/** POST /v1/execute with a toolset, over a socket, timed. */
async function executeIn(toolset: string, name: string, args: Record<string, unknown>) {
  const started = performance.now();
  const res = await request(`${base}/v1/execute`, { method: 'POST', dispatcher: agent, headers: { ...bearer(victim), 'content-type': 'application/json' }, body: JSON.stringify({ name, arguments: args, toolset }) });
  const body = (await res.body.json()) as { ok: boolean };
  return { status: res.statusCode, body, ms: performance.now() - started };
}
