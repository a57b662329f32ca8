import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { executorFor, type Execute } from '../helpers/liveness.js';
import { testableSandboxes } from '../unit/builtins/helpers.js';

// Issue: `(a|a)*b` over 100 files of 26 `a`s ran 93 s on the event loop and stalled every other tenant.
// grep now runs ripgrep in a child process. This pattern is instant for rg's automata, so a second one makes
// rg itself slow (a lazy-DFA blow-up, still linear) to prove that the call is killed at its deadline.
const BACKTRACKING = '(a|a)*b';
const SLOW_FOR_RG = 'a[ab]{25}b$';
const DEADLINE_MS = 1500;
const ATTACK_MS = 4000;

/** Processes (rg, or bwrap around it) still running the slow search. */
const slowSearches = (): number =>
  readdirSync('/proc').filter((name) => {
    if (!/^\d+$/.test(name)) return false;
    try {
      return readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(SLOW_FOR_RG);
    } catch {
      return false;
    }
  }).length;

describe.each(testableSandboxes)('grep under sandbox: %s, attacked with a backtracking regex', (sandbox) => {
  let app: FastifyInstance;
  let execute: Execute;
  let dir: string;
  const agent = new Agent({ connections: 32 });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-grep-attack-'));
    const attackerDir = path.join(dir, 'attacker');
    await mkdir(path.join(attackerDir, 'issue'), { recursive: true });
    await mkdir(path.join(attackerDir, 'bulk'), { recursive: true });
    // The files: 100 files of 26 `a`s. Beside them 6 MB of random a/b lines: seconds of rg work.
    for (let i = 0; i < 100; i += 1) {
      const name = `f${String(i).padStart(3, '0')}.txt`;
      await writeFile(path.join(attackerDir, 'issue', name), `${'a'.repeat(26)}\n`);
      const text = Buffer.from(randomBytes(61_000).map((byte, j) => (j % 61 === 60 ? 10 : byte & 1 ? 97 : 98)));
      await writeFile(path.join(attackerDir, 'bulk', name), text);
    }
    app = await buildTestApp(
      testConfig({
        builtins: { workspaceRoot: dir, sandbox },
        tenants: {
          // Retry is off so that one attempt's deadline is the call's (retrying TIMEOUT is another issue's business).
          attacker: { builtins: ['grep'], policies: { retry: false, timeout: { defaultMs: DEADLINE_MS } } },
          victim: {},
          acme: {},
        },
      }),
    );
    execute = executorFor(await app.listen({ host: '127.0.0.1', port: 0 }), agent);
  });
  afterAll(async () => {
    await app?.close();
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the backtracking pattern at once, kills a slow search at its deadline, and other tenants stay live', async () => {
    const attacker = await signToken({ tenant: 'attacker' });
    const quick = await execute(attacker, 'grep', { pattern: BACKTRACKING, path: 'issue' });
    expect(quick.body.ok).toBe(true);
    expect(JSON.parse(quick.body.output)).toMatchObject({ filesSearched: 100, totalMatches: 0 });

    const until = Date.now() + ATTACK_MS;
    const attackLoop = async () => {
      const results: { errorType: string | undefined; ms: number }[] = [];
      while (Date.now() < until) {
        for (const args of [{ pattern: BACKTRACKING, path: 'issue' }, { pattern: SLOW_FOR_RG, path: 'bulk' }]) {
          const { body, ms } = await execute(attacker, 'grep', args);
          results.push({ errorType: body.error?.errorType, ms });
        }
      }
      return results;
    };
    const victimLoop = async () => {
      const latencies: number[] = [];
      for (let i = 0; Date.now() < until; i += 1) {
        // A fresh token every time (its own sub): nothing is served from the verified-token cache.
        const token = await signToken({ tenant: 'victim', sub: `victim-${i}-${Math.random()}` });
        const { body, ms } = await execute(token, 'get_weather', { city: 'Oslo' });
        expect(body.ok).toBe(true);
        latencies.push(ms);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return latencies;
    };
    const [attacks, latencies] = await Promise.all([Promise.all([attackLoop(), attackLoop(), attackLoop()]), victimLoop()]);

    expect(latencies.length).toBeGreaterThan(5);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    const slow = attacks.flat().filter((a) => a.errorType === 'TIMEOUT');
    expect(slow.length, JSON.stringify(attacks)).toBeGreaterThan(0);
    // Answered at the deadline, not long after (the old engine answered a 30 s TIMEOUT after 93 s).
    for (const call of slow) expect(call.ms).toBeLessThan(DEADLINE_MS + 1000);
    expect(attacks.flat().every((a) => a.errorType === undefined || a.errorType === 'TIMEOUT')).toBe(true);
    // Every killed search is gone, process group and sandbox included.
    await expect.poll(slowSearches, { timeout: 3000, interval: 50 }).toBe(0);
  }, 30_000);
});
