// The pool's fairness when it is full, on a fresh pool: in a file of its own because workers recycled by
// earlier scripts (SCRIPTS_PER_WORKER) start their replacements early, which adds places for a while.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from '../../../src/code-mode/limits.js';
import { runInSandbox, SANDBOX_SCRIPTS_PER_TENANT, type HostCall } from '../../../src/code-mode/sandbox.js';

const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, wallTimeMs: 5000 };
const echo: HostCall = async (name, args) => ({ resolve: JSON.stringify({ name, args: JSON.parse(args) as unknown }) });

describe('the sandbox pool when full', () => {
  it('gives a tenant holding no script a turn when the pool is full of waiting scripts: the tenant holding the most gives up its newest', { retry: 2 }, async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: HostCall = async () => {
      await held;
      return { resolve: '1' };
    };
    // Two tenants fill the pool with scripts waiting on a tool, each up to its share.
    // A generous CPU limit: on a loaded machine the watchdog (wall time per slice) must not stop a hog's worker,
    // which would free places and re-place its scripts while the newcomer arrives.
    const hogLimits = { ...limits, cpuTimeMs: 5000, wallTimeMs: 20_000 };
    const hogs = ['hog-a', 'hog-b'].flatMap((tenant) => Array.from({ length: SANDBOX_SCRIPTS_PER_TENANT }, () => runInSandbox('return await tools.wait({});', slow, hogLimits, undefined, tenant)));
    // Time for every hog to be placed and waiting (QuickJS runtimes start slowly on a loaded machine), and for
    // the spare worker the pool starts beside the hogs' two to be ready.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const started = performance.now();
    expect(await runInSandbox('return 2;', echo, limits, undefined, 'newcomer')).toMatchObject({ ok: true, resultJson: '2' });
    expect(performance.now() - started).toBeLessThan(1000);
    release();
    const outcomes = await Promise.all(hogs);
    expect(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.stop)).filter((stop) => stop !== 'ok')).toEqual(['busy']);
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(2 * SANDBOX_SCRIPTS_PER_TENANT - 1);
  });

});
