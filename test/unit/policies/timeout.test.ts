import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { retryPolicy } from '../../../policies/retry.js';
import { timeoutPolicy } from '../../../policies/timeout.js';
import { ToolError } from '../../../src/call/tool-error.js';
import { successResult } from '../../../src/call/tool-result.js';
import type { DeadlineAware } from '../../../src/call/deadline.js';
import type { PolicyContext } from '../../../src/pipeline/types.js';
import type { ToolCall } from '../../../src/call/types.js';
import { asPolicy, fakeClock, makeCall, makeCtx, makeDeps, makeTool } from '../../helpers/policy-fixtures.js';

/** A handler that never finishes by itself and records whether its signal aborted. */
function hanging() {
  const seen: { signal?: AbortSignal } = {};
  const terminal = (_call: ToolCall, ctx: PolicyContext) => {
    seen.signal = ctx.signal;
    return new Promise<never>(() => {});
  };
  return Object.assign(terminal, { seen });
}

describe('timeout policy', () => {
  it('answers TIMEOUT even when the handler ignores its signal, and aborts that signal', async () => {
    const terminal = hanging();
    const result = await asPolicy(timeoutPolicy({ defaultMs: 20 }, makeDeps()))(makeCall(), makeCtx(), terminal);
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(terminal.seen.signal?.aborted).toBe(true);
  });

  it('sets no timer for an attempt answered within the turn that started it, and one for the time left otherwise', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const limited = () => timers.mock.calls.filter((call) => typeof call[1] === 'number' && call[1] > 1000 && call[1] <= 5_000);
    try {
      const policy = asPolicy(timeoutPolicy({ defaultMs: 5_000 }, makeDeps()));
      const answered = await policy(makeCall(), makeCtx(), async (call) => successResult(call, 'ok'));
      expect(answered.ok).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(limited()).toEqual([]);

      const pending = policy(makeCall(), makeCtx(), (call) => new Promise((resolve) => setTimeout(() => resolve(successResult(call, 'late')), 30)));
      expect((await pending).ok).toBe(true);
      expect(limited()).toHaveLength(1);
    } finally {
      timers.mockRestore();
    }
  });

  it('answers TIMEOUT at its deadline when the caller left with an untyped reason and the handler ignores both', async () => {
    const caller = new AbortController();
    const terminal = hanging();
    const started = Date.now();
    const pending = asPolicy(timeoutPolicy({ defaultMs: 40 }, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), terminal);
    caller.abort(new Error('client closed the connection'));
    const result = await pending;
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(terminal.seen.signal?.aborted).toBe(true);
  });

  it('never starts a call whose caller had already left, whatever the reason', async () => {
    const caller = new AbortController();
    caller.abort(new Error('client closed the connection'));
    const terminal = hanging();
    const result = await asPolicy(timeoutPolicy(undefined, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), terminal);
    expect(result.error).toEqual({ errorType: 'TIMEOUT', error: 'call was cancelled before it started' });
    expect(terminal.seen.signal).toBeUndefined();
  });

  it("prefers a per-glob option over the tool's own timeout over the default", async () => {
    const policy = asPolicy(timeoutPolicy({ defaultMs: 60_000, tools: { 'slow_*': 15 } }, makeDeps()));
    const viaGlob = await policy(makeCall(makeTool({ name: 'slow_x', timeoutMs: 60_000 })), makeCtx(), hanging());
    expect(viaGlob.error?.error).toContain('15 ms');
    const viaTool = await policy(makeCall(makeTool({ timeoutMs: 10 })), makeCtx(), hanging());
    expect(viaTool.error?.error).toContain('10 ms');
  });

  it('is capped by the call deadline and answers at once when it already passed', async () => {
    const terminal = hanging();
    const ctx: PolicyContext & DeadlineAware = { ...makeCtx(), deadline: Date.now() - 1 };
    const result = await asPolicy(timeoutPolicy(undefined, makeDeps()))(makeCall(), ctx, terminal);
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(terminal.seen.signal).toBeUndefined();
  });

  it("forwards the caller's abort to the handler's signal", async () => {
    const caller = new AbortController();
    let handlerSignal: AbortSignal | undefined;
    const pending = asPolicy(timeoutPolicy(undefined, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), (call, ctx) => {
      handlerSignal = ctx.signal;
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(successResult(call, 'stopped'))));
    });
    caller.abort();
    expect((await pending).output).toBe('stopped');
    expect(handlerSignal?.aborted).toBe(true);
  });

  it('passes a fast result through untouched', async () => {
    const call = makeCall();
    const result = await asPolicy(timeoutPolicy(undefined, makeDeps()))(call, makeCtx(), async (c) => successResult(c, 'quick'));
    expect(result.output).toBe('quick');
  });

  it("aborts only the attempt on timeout: the caller's signal stays live and keeps no listener of the policy", async () => {
    const caller = new AbortController();
    const terminal = hanging();
    const result = await asPolicy(timeoutPolicy({ defaultMs: 20 }, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), terminal);
    expect(result.error).toEqual({ errorType: 'TIMEOUT', error: 'lookup timed out after 20 ms' });
    expect(terminal.seen.signal?.aborted).toBe(true);
    expect(terminal.seen.signal?.reason).toMatchObject({ errorType: 'TIMEOUT' });
    expect(caller.signal.aborted).toBe(false);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    await asPolicy(timeoutPolicy(undefined, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), async (call) => successResult(call, 'quick'));
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('answers at once with the typed reason a shutdown aborts the caller with, also when the handler ignores its signal', async () => {
    const caller = new AbortController();
    const terminal = hanging();
    const pending = asPolicy(timeoutPolicy({ defaultMs: 60_000 }, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), terminal);
    caller.abort(new ToolError('TIMEOUT', 'gateway shutting down'));
    expect((await pending).error).toEqual({ errorType: 'TIMEOUT', error: 'gateway shutting down' });
    expect(terminal.seen.signal?.aborted).toBe(true);
    // A call that would start after the shutdown does not start.
    const late = hanging();
    expect((await asPolicy(timeoutPolicy(undefined, makeDeps()))(makeCall(), makeCtx({ signal: caller.signal }), late)).error?.error).toBe('gateway shutting down');
    expect(late.seen.signal).toBeUndefined();
  });

  it('hands the handler every field of a context a custom policy rebuilt, with the attempt signal', async () => {
    const caller = new AbortController();
    const rebuilt = { ...makeCtx({ signal: caller.signal }), note: 'from a custom policy' };
    let seen: (PolicyContext & { note?: string }) | undefined;
    await asPolicy(timeoutPolicy(undefined, makeDeps()))(makeCall(), rebuilt, async (call, ctx) => {
      seen = ctx;
      return successResult(call, 'ok');
    });
    expect(seen?.note).toBe('from a custom policy');
    expect(seen?.principal).toBe(rebuilt.principal);
    expect(seen?.signal).not.toBe(caller.signal);
    expect(seen?.signal.aborted).toBe(false);
  });

  it('under retry: a timed-out attempt of a read-only tool is retried, a call whose caller left is not', async () => {
    const deps = makeDeps({ clock: fakeClock() });
    const chain = (ctx: PolicyContext, terminal: (call: ToolCall, ctx: PolicyContext) => Promise<never>) =>
      asPolicy(retryPolicy({ attempts: 3, baseMs: 1 }, deps))(makeCall(makeTool({ readOnly: true })), ctx, (call, attemptCtx) => asPolicy(timeoutPolicy({ defaultMs: 10 }, deps))(call, attemptCtx, terminal));
    let attempts = 0;
    const timedOut = await chain(makeCtx(), () => {
      attempts += 1;
      return new Promise<never>(() => {});
    });
    expect(timedOut.error?.errorType).toBe('TIMEOUT');
    expect(attempts).toBe(3);

    const caller = new AbortController();
    let started = 0;
    const left = await chain(makeCtx({ signal: caller.signal }), (_call, ctx) => {
      started += 1;
      caller.abort(new Error('client closed the connection'));
      // An executor that honours its signal ends the attempt as the timeout policy would.
      return new Promise<never>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new ToolError('TIMEOUT', 'cancelled')), { once: true }));
    });
    expect(left.ok).toBe(false);
    expect(started).toBe(1);
  });
});
