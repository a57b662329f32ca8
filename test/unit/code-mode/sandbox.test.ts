import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from '../../../src/code-mode/limits.js';
import { runInSandbox, SANDBOX_QUEUE, SANDBOX_QUEUE_PER_TENANT, SANDBOX_SCRIPTS, SANDBOX_SCRIPTS_PER_TENANT, type HostCall } from '../../../src/code-mode/sandbox.js';

const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, wallTimeMs: 5000 };
const echo: HostCall = async (name, args) => ({ resolve: JSON.stringify({ name, args: JSON.parse(args) as unknown }) });
const run = (code: string, host: HostCall = echo, bounds: Partial<SandboxLimits> = {}) => runInSandbox(code, host, { ...limits, ...bounds });

describe('sandbox', () => {
  it('returns the JSON of the return value, what it logged, and awaits tool calls', async () => {
    const outcome = await run(`console.log('hi', {a: 1}); const [x, y] = await Promise.all([tools.a({n: 1}), tools['b-c']({n: 2})]); return x.args.n + y.args.n;`);
    expect(outcome).toMatchObject({ ok: true, resultJson: '3', logs: ['hi {"a":1}'], toolCalls: 2 });
  });

  it('turns a rejected call into a ToolCallError the script can catch', async () => {
    const denied: HostCall = async () => ({ reject: JSON.stringify({ errorType: 'PERMISSION_DENIED', message: 'no', tool: 'x', callId: 'c1' }) });
    const outcome = await run(`try { await tools.x({}); } catch (e) { return [e.name, e.errorType, e.message]; }`, denied);
    expect(outcome).toMatchObject({ ok: true, resultJson: '["ToolCallError","PERMISSION_DENIED","no"]' });
  });

  it('has no timers, process, require, fetch or host objects', async () => {
    const outcome = await run(
      `return [typeof setTimeout, typeof setInterval, typeof process, typeof require, typeof fetch, typeof Buffer, typeof WebAssembly, typeof globalThis.std, typeof globalThis.os,
        typeof tools.x.constructor.constructor('return this')().process, Object.keys(globalThis).join(',')];`,
    );
    expect(outcome.ok).toBe(true);
    if (outcome.ok) expect(JSON.parse(outcome.resultJson)).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'tools']);
  });

  it('refuses imports', async () => {
    const outcome = await run(`const fs = await import('fs'); return typeof fs;`);
    expect(outcome).toMatchObject({ ok: false, stop: 'script_error' });
  });

  it('stops an infinite loop at its CPU time limit, and the event loop stays free', async () => {
    const started = Date.now();
    // A tenant of its own: on a loaded machine the main thread's watchdog may stop this loop before the
    // engine does, terminating the worker, which puts the tenant in a cooldown.
    const outcome = await runInSandbox(`while (true) {}`, echo, { ...limits, cpuTimeMs: 100 }, undefined, 'looper');
    expect(outcome).toMatchObject({ ok: false, stop: 'cpu_time' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops a memory bomb, a deep recursion, and a huge return value', async () => {
    // Arrays grown element by element escape QuickJS's own allocation limit; the heap walk catches them.
    expect(await run(`const a = []; for (;;) { const b = []; for (let i = 0; i < 1e4; i++) b.push(i); a.push(b); }`, echo, { cpuTimeMs: 10_000, memoryBytes: 4 << 20 })).toMatchObject({ ok: false, stop: 'memory' });
    expect(await run(`const a = []; for (;;) a.push({ n: a.length });`, echo, { cpuTimeMs: 10_000, memoryBytes: 4 << 20 })).toMatchObject({ ok: false, stop: 'memory' });
    expect(await run(`const f = (n) => f(n + 1) + 1; return f(0);`)).toMatchObject({ ok: false, stop: 'stack' });
    expect(await run(`return 'x'.repeat(1 << 20);`)).toMatchObject({ ok: false, stop: 'result_size' });
  });

  it('stops a script at its tool-call limit, even when it catches the refusal', async () => {
    let calls = 0;
    const counted: HostCall = async () => ((calls += 1), { resolve: '1' });
    const outcome = await run(`for (let i = 0; i < 10000; i++) { try { await tools.t({ i }); } catch {} } return 'done';`, counted, { maxToolCalls: 50 });
    expect(outcome).toMatchObject({ ok: false, stop: 'tool_calls' });
    expect(calls).toBe(50);
  });

  it('keeps prototype pollution inside the sandbox, and a later script starts clean', async () => {
    const outcome = await run(`const r = await tools.x({}); r.__proto__.polluted = 1; Object.prototype.polluted2 = 2; JSON.parse = () => ({}); return { polluted: ({}).polluted };`);
    expect(outcome).toMatchObject({ ok: true, resultJson: '{"polluted":1}' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted2).toBeUndefined();
    expect(await run(`return ({}).polluted ?? 'clean';`)).toMatchObject({ ok: true, resultJson: '"clean"' });
  });

  it('bounds what is logged', async () => {
    const outcome = await run(`for (let i = 0; i < 1000; i++) console.log('x'.repeat(100)); return 1;`, echo, { maxLogBytes: 1000 });
    expect(outcome).toMatchObject({ ok: true, logsTruncated: true });
    expect(outcome.logs.length).toBe(9);
  });

  it('bounds hostile code the host itself reads: a thrown value whose message getter loops, a toJSON that loops', async () => {
    const started = Date.now();
    // Each under a tenant of its own: a loop the engine's interrupt does not reach here ends with its worker
    // terminated, which puts its tenant in a cooldown (docs/code-mode.md#a-script-that-must-be-stopped-by-force).
    const bounds = { ...limits, cpuTimeMs: 100 };
    expect(await runInSandbox(`throw { name: 'E', get message() { for (;;) {} } };`, echo, bounds, undefined, 'reader-1')).toMatchObject({ ok: false });
    expect(await runInSandbox(`return { toJSON() { for (;;) {} } };`, echo, bounds, undefined, 'reader-2')).toMatchObject({ ok: false, stop: 'cpu_time' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers a script that awaits forever', async () => {
    expect(await run(`await new Promise(() => {}); return 1;`)).toMatchObject({ ok: false, stop: 'never_settles' });
  });

  it('stops waiting at the wall time limit while a tool call hangs', async () => {
    const hang: HostCall = (_n, _a, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ resolve: 'null' })));
    expect(await run(`await tools.slow({}); return 1;`, hang, { wallTimeMs: 200 })).toMatchObject({ ok: false, stop: 'wall_time' });
  });

  it('terminates a worker stuck in one native call past its CPU limit, and a new worker serves the next script', async () => {
    // Inside the engine this fill would end at the memory limit (after over a second); the main thread's
    // clock ends it first. docs/code-mode.md#limits
    const runaway = await runInSandbox('new Array(3e7).fill(0); return 1;', echo, { ...limits, cpuTimeMs: 10, memoryBytes: 1024 * 1024 * 1024 }, undefined, 'runaway');
    expect(runaway).toMatchObject({ ok: false, stop: 'cpu_time' });
    expect(await run('return 2')).toMatchObject({ ok: true, resultJson: '2' });
    // A tenant's first forced stop costs it no cooldown (docs/code-mode.md#a-script-that-must-be-stopped-by-force).
    expect(await runInSandbox('return 3', echo, limits, undefined, 'runaway')).toMatchObject({ ok: true, resultJson: '3' });
  });

  it('refuses a script at once when every worker is busy and the queue is full', async () => {
    const hang: HostCall = (_n, _a, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ resolve: 'null' })));
    // Eight tenants, so no tenant's share stops the pool from filling.
    const held = Array.from({ length: SANDBOX_SCRIPTS + SANDBOX_QUEUE }, (_, i) => runInSandbox('await tools.slow({}); return 1;', hang, { ...limits, wallTimeMs: 1000 }, undefined, `t${i % 8}`));
    expect(await run('return 1')).toMatchObject({ ok: false, stop: 'busy' });
    const outcomes = await Promise.all(held);
    // A tenant holding more scripts than another waiting gives up its newest one (busy) as they end unevenly.
    for (const outcome of outcomes) expect(outcome.ok ? 'ok' : outcome.stop).toMatch(/^(wall_time|busy)$/);
    expect(await run('return 3')).toMatchObject({ ok: true, resultJson: '3' });
  });

  it("runs one tenant's scripts while another's wait on slow tools, and refuses past a tenant's queue share", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: HostCall = async () => {
      await held;
      return { resolve: '1' };
    };
    const hogs = Array.from({ length: SANDBOX_SCRIPTS_PER_TENANT + SANDBOX_QUEUE_PER_TENANT }, () => runInSandbox('return await tools.wait({});', slow, limits, undefined, 'hog'));
    // The hog's share is running or queued: one more is refused at once.
    expect(await runInSandbox('return 1;', echo, limits, undefined, 'hog')).toMatchObject({ ok: false, stop: 'busy' });
    // Another tenant's script runs now: the hog's scripts wait for their tools without holding a worker.
    expect(await runInSandbox('return 2;', echo, limits, undefined, 'other')).toMatchObject({ ok: true, resultJson: '2' });
    release();
    for (const outcome of await Promise.all(hogs)) expect(outcome).toMatchObject({ ok: true, resultJson: '1' });
  });
});
