import { describe, expect, it, vi } from 'vitest';
import { CallContext, followCancellation } from '../../src/execution/call-context.js';
import { LazyAbort } from '../../src/execution/lazy-abort.js';
import type { Logger } from '../../src/types.js';

const context = (abortSource: AbortSignal | LazyAbort): CallContext =>
  new CallContext({ tenant: 'acme', user: 'alice', roles: [], claims: {} }, 'c1', 'r1', abortSource, {} as Logger, 0, 'default', () => ({ ok: true }), () => undefined, undefined, undefined);

describe('CallContext cancellation', () => {
  it('follows a LazyAbort source through onAbort without creating its AbortSignal, and unsubscribes', () => {
    const source = new LazyAbort();
    const ctx = context(source);
    const heard = vi.fn();
    const dropped = vi.fn();
    ctx.onAbort(heard);
    const unsubscribe = ctx.onAbort(dropped);
    unsubscribe();
    source.abort('stop');
    expect(heard).toHaveBeenCalledWith('stop');
    expect(dropped).not.toHaveBeenCalled();
    expect(ctx.signal.aborted).toBe(true); // a late reader still sees the abort
  });

  it('follows a plain AbortSignal source, at once when it has already aborted', () => {
    const controller = new AbortController();
    const ctx = context(controller.signal);
    const heard = vi.fn();
    ctx.onAbort(heard);
    controller.abort('gone');
    expect(heard).toHaveBeenCalledWith('gone');
    const late = vi.fn();
    ctx.onAbort(late);
    expect(late).toHaveBeenCalledWith('gone');
  });

  it('followCancellation falls back to the signal of a context a custom policy rebuilt with an object spread', () => {
    const source = new LazyAbort();
    const ctx = context(source);
    const rebuilt = { ...ctx, signal: ctx.signal } as unknown as CallContext; // own fields only: no onAbort
    expect(typeof (rebuilt as { onAbort?: unknown }).onAbort).toBe('undefined');
    const heard = vi.fn();
    followCancellation(rebuilt, heard);
    source.abort('timeout');
    expect(heard).toHaveBeenCalledWith('timeout');
  });
});
