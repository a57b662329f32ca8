import { describe, expect, it } from 'vitest';
import { invokeTool } from '../../../src/call/invoke.js';
import { ToolError } from '../../../src/call/tool-error.js';
import type { ToolCall } from '../../../src/call/types.js';
import { makeCall, makeCtx, makeTool } from '../../helpers/policy-fixtures.js';

const callOf = (handler: (args: Record<string, unknown>) => unknown, extra: Partial<ToolCall> = {}): ToolCall => ({ ...makeCall(makeTool({ name: 'probe', handler })), ...extra });

describe('invokeTool', () => {
  it('never invokes a handler whose call is already cancelled: a typed reason is its answer, any other is TIMEOUT', async () => {
    let invoked = 0;
    const call = callOf(() => (invoked += 1));
    const left = new AbortController();
    left.abort(new Error('client closed the connection'));
    expect((await invokeTool(call, makeCtx({ signal: left.signal }))).error).toEqual({ errorType: 'TIMEOUT', error: 'call was cancelled before it finished' });
    const ended = new AbortController();
    ended.abort(new ToolError('TIMEOUT', 'the script ended before this call finished'));
    expect((await invokeTool(call, makeCtx({ signal: ended.signal }))).error).toEqual({ errorType: 'TIMEOUT', error: 'the script ended before this call finished' });
    expect(invoked).toBe(0);
  });

  it('answers a plain return value and a promised one alike, stringifying objects', async () => {
    for (const handler of [() => ({ a: 1 }), async () => ({ a: 1 })]) {
      const result = await invokeTool(callOf(handler), makeCtx());
      expect(result).toMatchObject({ ok: true, output: '{"a":1}', name: 'probe', truncated: false, trace: null });
      expect(result).not.toHaveProperty('resolvedFrom');
    }
  });

  it('always answers with a promise, also for a handler that returns at once', () => {
    expect(invokeTool(callOf(() => 'x'), makeCtx())).toBeInstanceOf(Promise);
    expect(invokeTool(callOf(() => {
      throw new Error('x');
    }), makeCtx())).toBeInstanceOf(Promise);
  });

  it('follows a thenable that is not a Promise, as await does', async () => {
    const thenable = { then: (resolve: (value: unknown) => void) => resolve('from a thenable') };
    expect(await invokeTool(callOf(() => thenable), makeCtx())).toMatchObject({ ok: true, output: 'from a thenable' });
  });

  it('turns a throw or a rejection into TOOL_EXCEPTION with the message only, and a ToolError into its errorType', async () => {
    const thrown = await invokeTool(callOf(() => {
      throw new Error('sync boom');
    }), makeCtx());
    const rejected = await invokeTool(callOf(async () => {
      throw new Error('async boom');
    }), makeCtx());
    const typed = await invokeTool(callOf(() => {
      throw new ToolError('UPSTREAM_ERROR', 'upstream said no');
    }), makeCtx());
    expect([thrown.error, rejected.error, typed.error]).toEqual([
      { errorType: 'TOOL_EXCEPTION', error: 'sync boom' },
      { errorType: 'TOOL_EXCEPTION', error: 'async boom' },
      { errorType: 'UPSTREAM_ERROR', error: 'upstream said no' },
    ]);
    expect(thrown.output).not.toContain('at ');
  });

  it('answers an output JSON cannot hold as TOOL_EXCEPTION on both paths, never a rejected call', async () => {
    for (const handler of [() => ({ big: 1n }), async () => ({ big: 1n })]) {
      const result = await invokeTool(callOf(handler), makeCtx());
      expect(result).toMatchObject({ ok: false, error: { errorType: 'TOOL_EXCEPTION' } });
    }
  });

  it('keeps resolvedFrom when the call came in by an alias', async () => {
    expect(await invokeTool(callOf(() => 'x', { resolvedFrom: 'old_name' }), makeCtx())).toMatchObject({ ok: true, resolvedFrom: 'old_name' });
  });
});
