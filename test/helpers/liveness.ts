// Liveness under attack: a listening app's /v1/execute over real sockets, and a loop of another tenant's
// cheap calls measured while an attack runs, so a test can assert that the gateway kept answering.
import { type Agent, request } from 'undici';
import { bearer } from './build.js';

export interface ExecuteAnswer {
  status: number;
  body: { ok: boolean; output: string; error?: { errorType: string; error: string } };
  ms: number;
}

export type Execute = (token: string, name: string, args: Record<string, unknown>) => Promise<ExecuteAnswer>;

/** POST /v1/execute on `base` (a listening app) through `dispatcher`, timed. */
export function executorFor(base: string, dispatcher: Agent): Execute {
  return async (token, name, args) => {
    const started = performance.now();
    const res = await request(`${base}/v1/execute`, {
      method: 'POST',
      dispatcher,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ name, arguments: args }),
    });
    const body = (await res.body.json()) as ExecuteAnswer['body'];
    return { status: res.statusCode, body, ms: performance.now() - started };
  };
}

export interface LivenessOptions {
  /** How long the victim keeps calling (it makes at least `minCalls` calls either way). */
  durationMs: number;
  attackLoops?: number;
  minCalls?: number;
  intervalMs?: number;
}

/**
 * Runs `attack` in loops while `victimCall` runs every `intervalMs`, and answers how long each victim call
 * took from the moment it was due: a loop held by the attack delays the timer too, so a hold is counted
 * even when it falls between two calls. The attack loops stop when the victim is done.
 */
export async function victimLatenciesDuring(attack: () => Promise<void>, victimCall: (i: number) => Promise<void>, options: LivenessOptions): Promise<number[]> {
  const { durationMs, attackLoops = 2, minCalls = 6, intervalMs = 50 } = options;
  let victimDone = false;
  const attackLoop = async () => {
    for (let i = 0; i < 10_000 && !victimDone; i += 1) await attack();
  };
  const victimLoop = async () => {
    const latencies: number[] = [];
    const until = Date.now() + durationMs;
    try {
      for (let i = 0; i < 1000 && (Date.now() < until || i < minCalls); i += 1) {
        const due = performance.now() + intervalMs;
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
        await victimCall(i);
        latencies.push(performance.now() - due);
      }
    } finally {
      victimDone = true;
    }
    return latencies;
  };
  const [latencies] = await Promise.all([victimLoop(), ...Array.from({ length: attackLoops }, attackLoop)]);
  return latencies;
}

/**
 * Runs `attack` once while `victimRound` runs every `intervalMs` until the attack has ended (at least
 * `minRounds`, at most `maxRounds` rounds): the victim measures its own calls.
 */
export async function whileAttacked(attack: () => Promise<void>, victimRound: (i: number) => Promise<void>, options: { intervalMs?: number; minRounds?: number; maxRounds?: number } = {}): Promise<void> {
  const { intervalMs = 100, minRounds = 3, maxRounds = 600 } = options;
  let attackDone = false;
  const victim = async () => {
    for (let i = 0; i < maxRounds && (!attackDone || i < minRounds); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      await victimRound(i);
    }
  };
  await Promise.all([victim(), attack().finally(() => (attackDone = true))]);
}
