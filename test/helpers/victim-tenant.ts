// A victim tenant for attack tests: while an attack runs in the same app, tenant `initech` calls a cheap
// tool (get_weather) and a trivial run_script of a code-mode toolset every 100 ms, and each answer must be
// ok within a second: one tenant's attack must never stall another tenant's calls.
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

/** Signs the victim's token and warms the sandbox workers, so they start before the attack, not during it. */
export async function victimOf(app: FastifyInstance): Promise<string> {
  const token = await signToken({ sub: 'vic', tenant: VICTIM_TENANT });
  for (let i = 0; i < 2; i += 1) await victimCall(app, token, { name: 'run_script', toolset: 'code', arguments: { code: 'return 1 + 1' } });
  return token;
}

async function victimCall(app: FastifyInstance, token: string, payload: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload });
  const ms = performance.now() - started;
  expect(res.json(), JSON.stringify(payload)).toMatchObject({ ok: true });
  return ms;
}

/**
 * Runs `attack` once while the victim calls get_weather and a trivial run_script every 100 ms (at least
 * `minRounds` rounds), checks each answered ok, and that each answered within 1 s.
 */
export async function expectVictimServedDuring(app: FastifyInstance, token: string, attack: () => Promise<void>, minRounds = 5): Promise<VictimTimes> {
  const times: VictimTimes = { cheap: [], script: [] };
  await whileAttacked(
    attack,
    async () => {
      times.cheap.push(await victimCall(app, token, { name: 'get_weather', arguments: { city: 'Oslo' } }));
      times.script.push(await victimCall(app, token, { name: 'run_script', toolset: 'code', arguments: { code: 'return 1 + 1' } }));
    },
    { minRounds },
  );
  expect(times.cheap.length).toBeGreaterThanOrEqual(minRounds);
  expect(Math.max(...times.cheap), JSON.stringify(times.cheap)).toBeLessThan(1000);
  expect(Math.max(...times.script), JSON.stringify(times.script)).toBeLessThan(1000);
  return times;
}

/** Repeats `attack` until at least `minMs` have passed (at most `maxRepeats` times), so the victim is sampled during it. */
export async function repeatFor(minMs: number, maxRepeats: number, attack: (repeat: number) => Promise<void>): Promise<number> {
  const until = Date.now() + minMs;
  let repeat = 0;
  while (repeat < maxRepeats && (repeat === 0 || Date.now() < until)) await attack(repeat++);
  return repeat;
}
