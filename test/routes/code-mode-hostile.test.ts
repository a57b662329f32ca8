// A hostile tenant's scripts against the code-mode sandbox and its inner calls, while another tenant is
// served: every attack runs bounded in count and time over loopback, ends at its bound with a clear error,
// and the other tenant's cheap tool call and trivial run_script each answer within a second.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

interface Probe {
  started: number;
  active: number;
  maxActive: number;
  abortedAtStart: number;
  echoed: number;
}
const probe = (): Probe => (globalThis as { __codeModeProbe?: Probe }).__codeModeProbe ?? { started: 0, active: 0, maxActive: 0, abortedAtStart: 0, echoed: 0 };

const ATTACKER_IN_FLIGHT = 10;
const attackerToolsets = {
  code: { mode: 'code', tools: ['slow', 'stubborn', 'echo'], sandbox: { cpuTimeMs: 250, wallTimeMs: 20_000, maxParallel: 16 } },
  // Room enough in time and memory to build a huge argument: only the argument bound stops it.
  bulk: { mode: 'code', tools: ['echo'], sandbox: { cpuTimeMs: 10_000, wallTimeMs: 20_000, memoryBytes: 128 * 1024 * 1024 } },
};

let app: FastifyInstance;
let baseUrl: string;
let victimToken: string;
const clients: Client[] = [];

const connect = async (token: string, toolset: string): Promise<Client> => {
  const client = new Client({ name: 'code-mode-hostile-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/${toolset}`), { requestInit: { headers: bearer(token) } }));
  clients.push(client);
  return client;
};

interface Answer {
  isError: boolean;
  text: string;
}
const runScript = async (client: Client, code: string): Promise<Answer> => {
  const result = await client.callTool({ name: 'run_script', arguments: { code } }, undefined, { timeout: 60_000 });
  return { isError: result.isError === true, text: (result.content as { type: string; text: string }[]).map((part) => part.text).join('') };
};
const resultOf = (answer: Answer): unknown => {
  expect(answer.isError, answer.text).toBe(false);
  return (JSON.parse(answer.text) as { result: unknown }).result;
};

let victim: Client;

/**
 * The victim tenant every 100 ms while `running` lasts (at most 60 rounds): a cheap tool over REST, then a
 * trivial run_script. Answers the slowest of each, measured from when it was due.
 */
const victimWhile = async (running: Promise<unknown>): Promise<{ tool: number; script: number; rounds: number }> => {
  let done = false;
  void running.finally(() => (done = true));
  const worst = { tool: 0, script: 0, rounds: 0 };
  for (let i = 0; i < 60 && !done; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    let started = performance.now();
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(victimToken), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
    expect(res.json()).toMatchObject({ ok: true });
    worst.tool = Math.max(worst.tool, performance.now() - started);
    started = performance.now();
    expect(resultOf(await runScript(victim, 'return 1'))).toBe(1);
    worst.script = Math.max(worst.script, performance.now() - started);
    worst.rounds += 1;
  }
  return worst;
};

beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      functions: [{ module: './test/fixtures/functions/code-mode-probe.mjs' }, { module: './test/fixtures/functions/basic.mjs' }],
      tenants: {
        acme: { toolsets: attackerToolsets, limits: { maxInFlight: ATTACKER_IN_FLIGHT } },
        initech: { toolsets: attackerToolsets, limits: { maxInFlight: ATTACKER_IN_FLIGHT } },
        // The tenant whose scripts force their workers to be terminated (and so earn it a cooldown).
        hooli: { toolsets: attackerToolsets, limits: { maxInFlight: ATTACKER_IN_FLIGHT } },
        globex: { functions: ['get_weather'], toolsets: { code: { mode: 'code', tools: ['get_weather'] } } },
      },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  victimToken = await signToken({ sub: 'bob', tenant: 'globex' });
  victim = await connect(victimToken, 'code');
  // Warm: the sandbox's workers, the type stripper and the victim's first calls are not the attack.
  await victimWhile(new Promise((resolve) => setTimeout(resolve, 250)));
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await app?.close();
});

describe('sandbox workers and CPU', () => {
  it("answers another tenant's trivial script at once while two tenants each hold three scripts waiting on a slow tool", { retry: 2 }, async () => {
    const attackers = [await connect(await signToken({ sub: 'mallory', tenant: 'acme' }), 'code'), await connect(await signToken({ sub: 'trudy', tenant: 'initech' }), 'code')];
    // Three scripts each, every one awaiting a 6 s tool: more than every worker of a 2-core pool.
    const attack = Promise.all(attackers.flatMap((attacker) => Array.from({ length: 3 }, () => runScript(attacker, 'return await tools.slow({ ms: 6000 });'))));
    const [worst, answers] = await Promise.all([victimWhile(new Promise((resolve) => setTimeout(resolve, 3000))), attack]);
    expect(worst.rounds).toBeGreaterThan(5);
    expect(worst.tool).toBeLessThan(1000);
    expect(worst.script).toBeLessThan(1000);
    for (const answer of answers) expect(resultOf(answer)).toBe('slept');
    // Retried: the victim's script is placed beside six held ones as workers start; under the full suite's load
    // one CI run read 1002 ms against the 1 s bound (the bound itself is unchanged).
  });

  it('counts CPU used while a tool call is outstanding: a loop of native calls beside a slow call stops within twice cpuTimeMs of CPU', async () => {
    const attacker = await connect(await signToken({ sub: 'mallory', tenant: 'hooli' }), 'code');
    // Each search is one native call of milliseconds, and the loop polls QuickJS's interrupt only every few
    // thousand iterations: only the main thread's clock stops it in time, and it must while a call is out.
    const code = 'tools.slow({ ms: 15000 }).catch(() => {}); const a = new Array(1e6).fill(0); for (;;) a.indexOf(1);';
    // The process's CPU over a trivial script is the baseline; the attack may add at most twice its limit.
    let before = process.cpuUsage();
    resultOf(await runScript(attacker, 'tools.slow({ ms: 1 }).catch(() => {}); return 1;'));
    const baseline = process.cpuUsage(before);
    before = process.cpuUsage();
    const answer = await runScript(attacker, code);
    const used = process.cpuUsage(before);
    const cpuMs = (used.user + used.system - baseline.user - baseline.system) / 1000;
    expect(cpuMs).toBeLessThan(2 * 250);
    expect(answer.isError).toBe(true);
    expect(answer.text, answer.text).toContain('"errorType":"TIMEOUT"');
    expect(answer.text).toContain('CPU time limit (250 ms)');
    // And while it runs again, the other tenant is served.
    const script = runScript(attacker, code);
    const [worst, again] = await Promise.all([victimWhile(script), script]);
    expect(again.text).toContain('CPU time limit');
    expect(worst.tool).toBeLessThan(1000);
    expect(worst.script).toBeLessThan(1000);
    // Two forced stops: the tenant's next script is refused at once for a cooldown, with Retry-After.
    // docs/code-mode.md#a-script-that-must-be-stopped-by-force
    const refused = await runScript(attacker, code);
    expect(refused.text).toContain('"errorType":"RATE_LIMITED"');
    expect(refused.text).toContain('scripts are paused');
  });
});

describe('inner calls end with their script', () => {
  let attacker: Client;
  beforeAll(async () => {
    attacker = await connect(await signToken({ sub: 'mallory', tenant: 'acme' }), 'code');
  });
  beforeEach(() => {
    Object.assign(probe(), { started: 0, active: 0, maxActive: 0, abortedAtStart: 0 });
  });

  // Retried like the first test above, for the same reason: under the whole suite with the demo serving beside it, CI
  // runs of ccc99e6 and 9f59f6f (Node 20) read the victim's plain call at 1,862 ms and its trivial script at 2,134 ms
  // against the 1 s bound, once each; alone and in the other runs it passed. The bound is unchanged, and a victim
  // that really waits on the attack fails every try.
  it('starts no inner call after its script answered, aborts the running ones, and never hands a handler an aborted signal', { retry: 2 }, async () => {
    // Fire and forget: each script starts 40 slow calls (far past its tenant's in-flight bound) and returns.
    const attack = async (): Promise<void> => {
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(
          Array.from({ length: 3 }, () => runScript(attacker, 'for (let i = 0; i < 40; i++) { tools.slow({ ms: 5000 }).catch(() => {}); tools.stubborn({ ms: 300 }).catch(() => {}); } return "gone";')),
        );
        for (const answer of answers) expect(resultOf(answer)).toBe('gone');
        // Every call of an answered script has ended: none still counted by the gateway, none starting later.
        const after = probe().started;
        await new Promise((resolve) => setTimeout(resolve, 350));
        expect(probe().started).toBe(after);
        expect(probe().active).toBe(0);
        // And every slot they and the scripts' requests held is given back (a loaded machine may take a moment
        // to close the answered streams): the next round's requests are admitted, none refused as overloaded.
        await vi.waitFor(() => expect(app.gateway.inFlight.of('acme')).toBe(0), { timeout: 5000, interval: 20 });
      }
    };
    const running = attack();
    const [worst] = await Promise.all([victimWhile(running), running]);
    expect(worst.tool).toBeLessThan(1000);
    expect(worst.script).toBeLessThan(1000);
    expect(probe().abortedAtStart).toBe(0);
    // The three run_script requests hold three of the tenant's slots; inner calls share what is left.
    expect(probe().maxActive).toBeLessThanOrEqual(ATTACKER_IN_FLIGHT);
  });

  it("counts inner calls against the tenant's maxInFlight: past it a call is refused RATE_LIMITED inside the script", async () => {
    const code = `
      const settled = await Promise.allSettled(Array.from({ length: 30 }, () => tools.slow({ ms: 300 })));
      const tally = {};
      for (const one of settled) { const key = one.status === 'fulfilled' ? 'ok' : one.reason.errorType; tally[key] = (tally[key] ?? 0) + 1; }
      return tally;`;
    const script = runScript(attacker, code);
    const [worst, answer] = await Promise.all([victimWhile(script), script]);
    expect(worst.tool).toBeLessThan(1000);
    expect(worst.script).toBeLessThan(1000);
    const tally = resultOf(answer) as Record<string, number>;
    // One slot is the run_script request's own.
    expect(tally.ok).toBeLessThanOrEqual(ATTACKER_IN_FLIGHT - 1);
    expect(tally.RATE_LIMITED).toBeGreaterThanOrEqual(30 - (ATTACKER_IN_FLIGHT - 1));
    expect(probe().maxActive).toBeLessThanOrEqual(ATTACKER_IN_FLIGHT - 1);
  });
});

describe('inner-call arguments', () => {
  it('refuses an argument larger than the request body limit inside the sandbox: VALIDATION_ERROR, and the tool never runs', async () => {
    const attacker = await connect(await signToken({ sub: 'mallory', tenant: 'acme' }), 'bulk');
    const before = probe().echoed;
    const code = `
      // 1.5 MiB of JSON per call, past the 1 MiB body limit (a 2M-element array's JSON would cost the
      // script itself over a second of CPU per call in QuickJS, on its own CPU limit).
      const items = ['x'.repeat(1.5 * 1024 * 1024)];
      const out = [];
      for (let i = 0; i < 40; i++) { try { await tools.echo({ items }); out.push('ok'); } catch (error) { out.push(error.errorType); } }
      const small = await tools.echo({ items: [1, 2, 3] });
      return { out: [...new Set(out)], small };`;
    const script = runScript(attacker, code);
    const [worst, answer] = await Promise.all([victimWhile(script), script]);
    expect(worst.tool).toBeLessThan(1000);
    expect(worst.script).toBeLessThan(1000);
    expect(resultOf(answer)).toEqual({ out: ['VALIDATION_ERROR'], small: { count: 3 } });
    expect(probe().echoed).toBe(before + 1);
  });
});
