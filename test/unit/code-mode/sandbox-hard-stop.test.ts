// A runaway script whose worker the main thread must terminate, on a fresh pool: in a file of its own because
// the cooldown it earns its tenant and the workers it costs would change what the other pool tests see.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from '../../../src/code-mode/limits.js';
import { runInSandbox, SANDBOX_WORKERS, type HostCall, type SandboxOutcome } from '../../../src/code-mode/sandbox.js';

const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, wallTimeMs: 10_000 };
const TOOL_MS = 300;
const slowTool: HostCall = async () => {
  await new Promise((resolve) => setTimeout(resolve, TOOL_MS));
  return { resolve: '1' };
};
/** One native call no interrupt reaches: only the main thread's watchdog can stop it, by terminating its worker. */
const RUNAWAY = 'return new Array(1e9).indexOf(1);';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Timed {
  readonly outcome: SandboxOutcome;
  readonly ms: number;
}
const timed = async (run: Promise<SandboxOutcome>): Promise<Timed> => {
  const started = performance.now();
  const outcome = await run;
  return { outcome, ms: performance.now() - started };
};
const summary = (outcome: SandboxOutcome): string => (outcome.ok ? 'ok' : outcome.stop);

describe('a script that forces its worker to be terminated', () => {
  it("ends no other tenant's script, and its tenant is refused for a cooldown", async () => {
    // As many victim tenants as workers: the attacker cannot have a worker of the pool to itself.
    const victims = Array.from({ length: SANDBOX_WORKERS }, (_, index) => `victim-${index}`);
    // The pool's workers start with its first script: measured times begin once they have.
    await Promise.all(victims.map((tenant) => runInSandbox('return 0;', slowTool, limits, undefined, tenant)));
    let attacking = true;
    const victimLoop = async (tenant: string): Promise<{ calls: Timed[]; trivial: Timed[] }> => {
      const calls: Timed[] = [];
      const trivial: Timed[] = [];
      // Bounded: at most 12 rounds, and none once the attack is over.
      for (let round = 0; round < 12 && attacking; round++) {
        const [a, b, c] = await Promise.all([
          timed(runInSandbox('const x = await tools.slow({}); const y = await tools.slow({}); return x + y;', slowTool, limits, undefined, tenant)),
          timed(runInSandbox('return (await tools.slow({})) + 1;', slowTool, limits, undefined, tenant)),
          timed(runInSandbox('return 2;', slowTool, limits, undefined, tenant)),
        ]);
        calls.push(a, b);
        trivial.push(c);
      }
      return { calls, trivial };
    };
    const victimRuns = victims.map(victimLoop);
    // Victims hold scripts waiting on the tool on every worker before the attack starts.
    await sleep(400);
    const attacker: Timed[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      attacker.push(await timed(runInSandbox(RUNAWAY, slowTool, limits, undefined, 'attacker')));
      await sleep(300);
    }
    attacking = false;
    const results = await Promise.all(victimRuns);

    for (const { calls, trivial } of results) {
      expect(calls.map((call) => summary(call.outcome))).toEqual(calls.map(() => 'ok'));
      expect(trivial.map((call) => summary(call.outcome))).toEqual(trivial.map(() => 'ok'));
      // Within 1 s of each script's own work (two tool calls of 300 ms for the longest).
      for (const call of calls) expect(call.ms).toBeLessThan(2 * TOOL_MS + 1000);
      for (const call of trivial) expect(call.ms).toBeLessThan(1000);
    }
    // The attacker: its scripts stopped at their CPU limit (the first forced stop is free), then refused while
    // its tenant cools down.
    expect(attacker.map((run) => summary(run.outcome))).toEqual(['cpu_time', 'cpu_time', 'cooldown', 'cooldown']);
    const refused = attacker[2]!.outcome;
    expect(refused.ok === false && refused.retryAfterMs).toBeGreaterThan(5000);
    for (const run of attacker.slice(2)) expect(run.ms).toBeLessThan(100);
  }, 30_000);
});
