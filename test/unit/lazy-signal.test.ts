import { describe, expect, it, vi } from 'vitest';
import { CallContext, followCall } from '../../src/execution/call-context.js';
import { LazySignal } from '../../src/execution/lazy-signal.js';
import type { Logger } from '../../src/types.js';

const context = (cancellation: AbortSignal | LazySignal): CallContext =>
  new CallContext({ tenant: 'acme', user: 'alice', roles: [], claims: {} }, 'c1', 'r1', cancellation, {} as Logger, 0, 'default', () => ({ ok: true }), () => undefined, undefined, undefined);

describe('LazySignal', () => {
  it('gives a reader who comes after the abort an aborted signal with the same reason', () => {
    const cancellation = new LazySignal();
    const reason = new Error('client closed the connection');
    cancellation.abort(reason);
    const signal = context(cancellation).signal;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
  });

  it('aborts a signal read before the abort, and tells followers once; a stopped follower hears nothing', () => {
    const cancellation = new LazySignal();
    const signal = context(cancellation).signal;
    const heard = vi.fn();
    const stopped = vi.fn();
    followCall(context(cancellation), heard);
    followCall(context(cancellation), stopped)();
    cancellation.abort('gone');
    cancellation.abort('again');
    expect(signal.aborted).toBe(true);
    expect(heard).toHaveBeenCalledTimes(1);
    expect(heard).toHaveBeenCalledWith('gone');
    expect(stopped).not.toHaveBeenCalled();
    const late = vi.fn();
    followCall(context(cancellation), late);
    expect(late).toHaveBeenCalledWith('gone');
  });

  it('tells every follower when one stops following from inside its own callback, as the timeout policy does on settling', () => {
    const cancellation = new LazySignal();
    const heard: string[] = [];
    const stopFirst = followCall(context(cancellation), () => {
      heard.push('first');
      stopFirst();
    });
    followCall(context(cancellation), () => heard.push('second'));
    followCall(context(cancellation), () => heard.push('third'));
    cancellation.abort('gone');
    expect(heard).toEqual(['first', 'second', 'third']);
  });

  it('follows a context built on a plain signal, or rebuilt by a policy, through its signal', () => {
    const controller = new AbortController();
    const rebuilt = { ...context(controller.signal), signal: controller.signal };
    const heard = vi.fn();
    followCall(rebuilt, heard);
    controller.abort('stop');
    expect(heard).toHaveBeenCalledWith('stop');
  });
});
