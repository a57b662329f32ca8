import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { builtinPolicies } from '../../../policies/index.js';
import { CallContext, deriveContext } from '../../../src/call/call-context.js';
import { Cancellation } from '../../../src/shared/cancellation.js';
import { successResult } from '../../../src/call/tool-result.js';
import { createPolicyChain } from '../../../src/pipeline/chain.js';
import type { Next, PolicyContext } from '../../../src/pipeline/types.js';
import type { Logger } from '../../../src/call/types.js';
import { makeCall, makeDeps } from '../../helpers/policy-fixtures.js';

const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silent } as unknown as Logger;

const context = (cancellation: Cancellation, deadline?: number): CallContext =>
  new CallContext({ tenant: 'acme', user: 'alice', roles: [], claims: {} }, 'c1', 'r1', cancellation, silent, 0, 'default', () => ({ ok: true }), undefined, deadline);

describe('Cancellation', () => {
  it('gives a reader who comes after the abort an aborted signal with the same reason', () => {
    const cancellation = new Cancellation();
    const reason = new Error('client closed the connection');
    cancellation.abort(reason);
    const signal = context(cancellation).signal;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
  });

  it('aborts a signal read before the abort, and tells followers once; a stopped follower hears nothing', () => {
    const cancellation = new Cancellation();
    const signal = context(cancellation).signal;
    const heard = vi.fn();
    const stopped = vi.fn();
    cancellation.follow(heard);
    cancellation.follow(stopped)();
    cancellation.abort('gone');
    cancellation.abort('again');
    expect(signal.aborted).toBe(true);
    expect(heard).toHaveBeenCalledTimes(1);
    expect(heard).toHaveBeenCalledWith('gone');
    expect(stopped).not.toHaveBeenCalled();
    const late = vi.fn();
    cancellation.follow(late);
    expect(late).toHaveBeenCalledWith('gone');
  });

  it('tells every follower when one stops following from inside its own callback, as the timeout policy does on settling', () => {
    const cancellation = new Cancellation();
    const heard: string[] = [];
    const stopFirst = cancellation.follow(() => {
      heard.push('first');
      stopFirst();
    });
    cancellation.follow(() => heard.push('second'));
    cancellation.follow(() => heard.push('third'));
    cancellation.abort('gone');
    expect(heard).toEqual(['first', 'second', 'third']);
  });

  it('is, when made from a signal, that very signal: followed through it, and listened to only while followed', () => {
    const controller = new AbortController();
    const cancellation = Cancellation.of(controller.signal);
    expect(context(cancellation).signal).toBe(controller.signal);
    const heard = vi.fn();
    const stop = cancellation.follow(heard);
    stop();
    cancellation.follow(heard);
    controller.abort('stop');
    expect(heard).toHaveBeenCalledTimes(1);
    expect(heard).toHaveBeenCalledWith('stop');
    expect([cancellation.aborted, cancellation.reason]).toEqual([true, 'stop']);
    expect(() => cancellation.abort('again')).toThrow(TypeError);
  });
});

describe('deriveContext', () => {
  it("keeps the call's cancellation and the earlier deadline; a child cancellation replaces it for the child only", () => {
    const parent = new Cancellation();
    const ctx = context(parent, 5_000);
    expect(deriveContext(ctx).cancellation).toBe(parent);
    expect(deriveContext(ctx, { deadline: 9_000 }).deadline).toBe(5_000);
    expect(deriveContext(ctx, { deadline: 1_000 }).deadline).toBe(1_000);
    const attempt = new Cancellation();
    const child = deriveContext(ctx, { cancellation: attempt });
    expect(child.signal).toBe(attempt.signal);
    expect(ctx.cancellation).toBe(parent);
  });

  it('rebuilds a spread context, which drops the signal getter, into one whose signal is the call’s', () => {
    const parent = new Cancellation();
    // As a custom policy (plain JavaScript) writes it; TypeScript itself sees that the spread has no `signal`.
    const spread = { ...context(parent) } as unknown as PolicyContext;
    expect('signal' in spread).toBe(false);
    const derived = deriveContext(spread);
    parent.abort('client gone');
    expect(derived.signal.aborted).toBe(true);
    expect(derived.signal.reason).toBe('client gone');
  });

  it('a custom policy that hands on `{ ...ctx }` before the timeout policy leaves the call cancellable: the handler hears the caller leave', async () => {
    let handlerSignal: AbortSignal | undefined;
    let handedOn: unknown;
    const terminal: Next = (call, ctx) => {
      handlerSignal = ctx.signal;
      handedOn = (ctx as PolicyContext & { handedOnBy?: string }).handedOnBy;
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(successResult(call, 'stopped')), { once: true }));
    };
    const chain = await createPolicyChain({
      builtins: builtinPolicies,
      baseDir: fileURLToPath(new URL('../../fixtures/', import.meta.url)),
      tenantPolicies: { custom: [{ module: './spread-context-policy.mjs', before: 'timeout' }] },
      deps: makeDeps(),
      terminal,
    });
    const caller = new Cancellation();
    const pending = chain(makeCall(), context(caller));
    await vi.waitFor(() => expect(handlerSignal).toBeDefined(), { timeout: 1_000, interval: 5 });
    caller.abort(new Error('client closed the connection'));
    await expect(pending).resolves.toMatchObject({ ok: true, output: 'stopped' });
    expect(handlerSignal?.aborted).toBe(true);
    expect(handedOn).toBe('spread-context');
  });
});
