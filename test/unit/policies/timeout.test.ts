import { describe, expect, it } from 'vitest';
import { timeoutPolicy } from '../../../policies/timeout.js';
import { successResult } from '../../../src/execution/tool-result.js';
import type { DeadlineAware } from '../../../src/pipeline/deps.js';
import type { PolicyContext } from '../../../src/pipeline/types.js';
import type { ToolCall } from '../../../src/types.js';
import { makeCall, makeCtx, makeDeps, makeTool } from '../../helpers/policy-fixtures.js';

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
    const result = await timeoutPolicy({ defaultMs: 20 }, makeDeps())(makeCall(), makeCtx(), terminal);
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(terminal.seen.signal?.aborted).toBe(true);
  });

  it("prefers a per-glob option over the tool's own timeout over the default", async () => {
    const policy = timeoutPolicy({ defaultMs: 60_000, tools: { 'slow_*': 15 } }, makeDeps());
    const viaGlob = await policy(makeCall(makeTool({ name: 'slow_x', timeoutMs: 60_000 })), makeCtx(), hanging());
    expect(viaGlob.error?.error).toContain('15 ms');
    const viaTool = await policy(makeCall(makeTool({ timeoutMs: 10 })), makeCtx(), hanging());
    expect(viaTool.error?.error).toContain('10 ms');
  });

  it('is capped by the call deadline and answers at once when it already passed', async () => {
    const terminal = hanging();
    const ctx: PolicyContext & DeadlineAware = { ...makeCtx(), deadline: Date.now() - 1 };
    const result = await timeoutPolicy(undefined, makeDeps())(makeCall(), ctx, terminal);
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(terminal.seen.signal).toBeUndefined();
  });

  it("forwards the caller's abort to the handler's signal", async () => {
    const caller = new AbortController();
    let handlerSignal: AbortSignal | undefined;
    const pending = timeoutPolicy(undefined, makeDeps())(makeCall(), makeCtx({ signal: caller.signal }), (call, ctx) => {
      handlerSignal = ctx.signal;
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(successResult(call, 'stopped'))));
    });
    caller.abort();
    expect((await pending).output).toBe('stopped');
    expect(handlerSignal?.aborted).toBe(true);
  });

  it('passes a fast result through untouched', async () => {
    const call = makeCall();
    const result = await timeoutPolicy(undefined, makeDeps())(call, makeCtx(), async (c) => successResult(c, 'quick'));
    expect(result.output).toBe('quick');
  });
});
