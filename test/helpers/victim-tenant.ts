// A victim tenant for attack tests: while an attack runs in the same app, tenant `initech` calls a cheap
// tool (get_weather) and a trivial run_script of a code-mode toolset every 100 ms, and each answer must be
// ok within a second: one tenant's attack must never stall another tenant's calls.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { bearer, signToken } from './build.js';
import { whileAttacked } from './liveness.js';

export const VICTIM_TENANT = 'initech';

/** The function modules the victim calls: add them to the app's `functions`. */
export const VICTIM_FUNCTIONS = [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/code-mode.mjs' }];

/** The victim tenant's config: add it to the app's `tenants` under VICTIM_TENANT. */
export const VICTIM_TENANT_CONFIG = { toolsets: { code: { mode: 'code', tools: ['add'], sandbox: { cpuTimeMs: 1000, wallTimeMs: 5000 } } } };

export interface VictimTimes {
  cheap: number[];
  script: number[];
}

const TRIVIAL_SCRIPT = { name: 'run_script', toolset: 'code', arguments: { code: 'return 1 + 1' } };
/** Tries per warm-up call: a sandbox worker's first script on a machine busy starting a whole test run was stopped
 * by force in two CI runs (src/code-mode/sandbox-worker.ts now warms its engine); warming is not what these tests
 * check, the attack's rounds are. */
const WARM_UP_TRIES = 3;

/** Signs the victim's token and warms the sandbox workers, so they start before the attack, not during it. */
export async function victimOf(app: FastifyInstance): Promise<string> {
  const token = await signToken({ sub: 'vic', tenant: VICTIM_TENANT });
  for (let i = 0; i < 2; i += 1) {
    let answer = await victimAnswer(app, token, TRIVIAL_SCRIPT);
    for (let tries = 1; !answer.ok && tries < WARM_UP_TRIES; tries += 1) {
      // A tenant whose script was stopped by force is paused for a while (RATE_LIMITED with a retry-after): wait it out, bounded.
      await sleep(Math.min(10_000, answer.retryAfterMs ?? 0));
      answer = await victimAnswer(app, token, TRIVIAL_SCRIPT);
    }
    expect(answer.ok, `warm-up ${JSON.stringify(TRIVIAL_SCRIPT)} answered ${answer.body}`).toBe(true);
  }
  return token;
}

async function victimAnswer(app: FastifyInstance, token: string, payload: Record<string, unknown>): Promise<{ ok: boolean; body: string; ms: number; retryAfterMs?: number }> {
  const started = performance.now();
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload });
  const answer = res.json() as { ok?: unknown; retryAfterMs?: unknown };
  return { ok: answer.ok === true, body: res.body, ms: performance.now() - started, ...(typeof answer.retryAfterMs === 'number' ? { retryAfterMs: answer.retryAfterMs } : {}) };
}

async function victimCall(app: FastifyInstance, token: string, payload: Record<string, unknown>): Promise<number> {
  const { ok, body, ms } = await victimAnswer(app, token, payload);
  // The answer itself in the message: a failure says which error it was.
  expect(ok, `${JSON.stringify(payload)} answered ${body}`).toBe(true);
  return ms;
}

/**
 * Runs `attack` while the victim calls get_weather and a trivial run_script every 100 ms, checks each
 * answered ok within 1 s, and that at least `minRounds` rounds ran while the attack did. The attack is
 * given the count of rounds so far, so a short one can repeat until the victim was sampled (repeatUntil).
 */
export async function expectVictimServedDuring(app: FastifyInstance, token: string, attack: (rounds: () => number) => Promise<unknown>, minRounds = 5): Promise<VictimTimes> {
  const times: VictimTimes = { cheap: [], script: [] };
  let attacking = true;
  let roundsDuring = 0;
  await whileAttacked(
    async () => {
      try {
        await attack(() => times.script.length);
      } finally {
        attacking = false;
      }
    },
    async () => {
      const during = attacking;
      times.cheap.push(await victimCall(app, token, { name: 'get_weather', arguments: { city: 'Oslo' } }));
      times.script.push(await victimCall(app, token, TRIVIAL_SCRIPT));
      if (during) roundsDuring += 1;
    },
    { minRounds },
  );
  expect(roundsDuring, 'victim rounds while the attack ran').toBeGreaterThanOrEqual(minRounds);
  expect(Math.max(...times.cheap), JSON.stringify(times.cheap)).toBeLessThan(1000);
  expect(Math.max(...times.script), JSON.stringify(times.script)).toBeLessThan(1000);
  return times;
}

/**
 * Repeats a short attack until the victim has done `minRounds` rounds, at most `maxRepeats` times and, once
 * past the first, not after `maxMs`: bounded in count and time. Answers how many times it ran.
 */
export async function repeatUntil(rounds: () => number, attack: (repeat: number) => Promise<void>, options: { minRounds?: number; maxRepeats: number; maxMs?: number }): Promise<number> {
  const { minRounds = 6, maxRepeats, maxMs = 20_000 } = options;
  const until = Date.now() + maxMs;
  let repeat = 0;
  while (repeat < maxRepeats && (repeat === 0 || (rounds() < minRounds && Date.now() < until))) await attack(repeat++);
  return repeat;
}
