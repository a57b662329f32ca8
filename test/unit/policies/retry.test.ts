import { describe, expect, it } from 'vitest';
import { retryPolicy } from '../../../policies/retry.js';
import { callFailure, markPermanent, successResult } from '../../../src/call/tool-result.js';
import type { ErrorType, ToolCall } from '../../../src/call/types.js';
import { asPolicy, fakeClock, makeCall, makeCtx, makeDeps, makeTool } from '../../helpers/policy-fixtures.js';

function failing(times: number, errorType: ErrorType = 'UPSTREAM_ERROR') {
  let calls = 0;
  const terminal = async (call: ToolCall) => (++calls <= times ? callFailure(call, errorType, 'flaky') : successResult(call, 'ok'));
  return Object.assign(terminal, { count: () => calls });
}

describe('retry policy', () => {
  it('retries a read-only tool with growing jittered backoff until it succeeds', async () => {
    const clock = fakeClock();
    const terminal = failing(2);
    const result = await asPolicy(retryPolicy({ attempts: 3, baseMs: 100 }, makeDeps({ clock })))(makeCall(makeTool({ readOnly: true })), makeCtx(), terminal);
    expect(result.ok).toBe(true);
    expect(terminal.count()).toBe(3);
    expect(clock.sleeps).toEqual([75, 150]); // cap/2 + random(0.5) * cap/2 for caps 100, 200
  });

  it('retries an idempotent tool but never a destructive or unmarked one', async () => {
    const deps = makeDeps({ clock: fakeClock() });
    const idempotent = failing(1);
    await asPolicy(retryPolicy(undefined, deps))(makeCall(makeTool({ idempotent: true })), makeCtx(), idempotent);
    expect(idempotent.count()).toBe(2);
    const destructive = failing(5);
    const result = await asPolicy(retryPolicy(undefined, deps))(makeCall(makeTool({ destructive: true })), makeCtx(), destructive);
    expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
    expect(destructive.count()).toBe(1);
  });

  it('never retries a built-in tool after TIMEOUT, though it retries other read-only tools on TIMEOUT', async () => {
    const deps = makeDeps({ clock: fakeClock() });
    const builtin = failing(5, 'TIMEOUT');
    const result = await asPolicy(retryPolicy(undefined, deps))(makeCall(makeTool({ name: 'read_file', source: 'builtin', readOnly: true, idempotent: true })), makeCtx(), builtin);
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(builtin.count()).toBe(1);
    const remote = failing(1, 'TIMEOUT');
    expect((await asPolicy(retryPolicy(undefined, deps))(makeCall(makeTool({ readOnly: true })), makeCtx(), remote)).ok).toBe(true);
    expect(remote.count()).toBe(2);
  });

  it('stops after the configured attempts and never retries non-transient failures', async () => {
    const deps = makeDeps({ clock: fakeClock() });
    const always = failing(100);
    await asPolicy(retryPolicy({ attempts: 4 }, deps))(makeCall(makeTool({ readOnly: true })), makeCtx(), always);
    expect(always.count()).toBe(4);
    const denied = failing(100, 'PERMISSION_DENIED');
    await asPolicy(retryPolicy(undefined, deps))(makeCall(makeTool({ readOnly: true })), makeCtx(), denied);
    expect(denied.count()).toBe(1);
  });

  it('never repeats a failure marked permanent (a definite answer such as an HTTP 404)', async () => {
    let calls = 0;
    const terminal = async (call: ToolCall) => (calls++, markPermanent(callFailure(call, 'UPSTREAM_ERROR', 'API answered HTTP 404')));
    const result = await asPolicy(retryPolicy({ attempts: 3 }, makeDeps({ clock: fakeClock() })))(makeCall(makeTool({ readOnly: true })), makeCtx(), terminal);
    expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
    expect(calls).toBe(1);
  });

  it('never sleeps past the call deadline or after abort', async () => {
    const clock = fakeClock();
    const terminal = failing(100);
    const ctx = { ...makeCtx(), deadline: clock.now() + 120 };
    await asPolicy(retryPolicy({ attempts: 5, baseMs: 100 }, makeDeps({ clock })))(makeCall(makeTool({ readOnly: true })), ctx, terminal);
    expect(terminal.count()).toBe(2); // 75 ms fits before the deadline, the next 150 ms does not
    const controller = new AbortController();
    controller.abort();
    const aborted = failing(100);
    await asPolicy(retryPolicy(undefined, makeDeps({ clock })))(makeCall(makeTool({ readOnly: true })), makeCtx({ signal: controller.signal }), aborted);
    expect(aborted.count()).toBe(1);
  });
});
