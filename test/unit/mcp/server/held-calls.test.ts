// The calls of modern callers held for their answers (src/mcp/server/held-calls.ts): two replicas on one bus, the
// answer posted to the one that does not hold the call; the per-tenant bound; another caller's answer.
import { afterEach, describe, expect, it } from 'vitest';
import { createHeldCalls, type HeldCalls } from '../../../../src/mcp/server/held-calls.js';
import { createMemoryBus } from '../../../../src/store/bus.js';
import { Cancellation } from '../../../../src/shared/cancellation.js';

const log = { warn: () => undefined } as unknown as Parameters<typeof createHeldCalls>[1];
const alice = { tenant: 'acme', user: 'alice' };
const question = { method: 'elicitation/create' as const, params: { message: 'Your name?', requestedSchema: { type: 'object', properties: {} } } };
const open: HeldCalls[] = [];
const replicas = (waitMs = 1_000): [HeldCalls, HeldCalls] => {
  const bus = createMemoryBus();
  const pair: [HeldCalls, HeldCalls] = [createHeldCalls(bus, log, { waitMs }), createHeldCalls(bus, log, { waitMs })];
  open.push(...pair);
  return pair;
};
afterEach(() => {
  for (const calls of open.splice(0)) calls.close();
});

describe('held calls', () => {
  it("delivers an answer posted to another replica to the call held here, and sends back what it did next", async () => {
    const [a, b] = replicas();
    const call = a.create(alice);
    const answer = call.ask(question, new AbortController().signal, 5_000).then((reply) => {
      call.settle({ kind: 'done', result: { content: [{ type: 'text', text: `hello ${String((reply.content as { name: string }).name)}` }] } });
      return reply;
    });
    expect(await call.next(undefined, undefined)).toEqual({ kind: 'input', questions: { q1: question } });
    expect(a.size()).toBe(1);
    const outcome = await b.resume(a.replica, call.id, alice, { q1: { action: 'accept', content: { name: 'Ada' } } }, new Cancellation());
    expect(outcome).toEqual({ kind: 'done', result: { content: [{ type: 'text', text: 'hello Ada' }] } });
    await expect(answer).resolves.toMatchObject({ action: 'accept' });
  });

  it("does not deliver another caller's answer, on either replica", async () => {
    const [a, b] = replicas();
    const call = a.create(alice);
    void call.ask(question, new AbortController().signal, 5_000).catch(() => undefined);
    await call.next(undefined, undefined);
    const mallory = { tenant: 'acme', user: 'mallory' };
    const answers = { q1: { action: 'accept', content: { name: 'Mallory' } } };
    expect(await b.resume(a.replica, call.id, mallory, answers, new Cancellation())).toEqual({ kind: 'gone' });
    expect(await a.resume(a.replica, call.id, mallory, answers, new Cancellation())).toEqual({ kind: 'gone' });
    // Still waiting for alice.
    expect(await call.next(undefined, 10)).toEqual({ kind: 'input', questions: { q1: question } });
  });

  it('says "working" when the call neither asks nor ends within the wait, and "gone" for a holder that does not answer', async () => {
    const [a, b] = replicas(50);
    const call = a.create(alice);
    void call.ask(question, new AbortController().signal, 5_000).catch(() => undefined);
    await call.next(undefined, undefined);
    expect(await b.resume(a.replica, call.id, alice, { q1: { action: 'decline' } }, new Cancellation())).toEqual({ kind: 'working' });
    a.close();
    expect(await b.resume(a.replica, call.id, alice, {}, new Cancellation())).toEqual({ kind: 'gone' });
  });

  it('holds at most the bound of one tenant’s calls on a replica; another tenant is not affected', async () => {
    const bus = createMemoryBus();
    const calls = createHeldCalls(bus, log, { maxPerTenant: 2 });
    open.push(calls);
    const ask = (tenant: string) => calls.create({ tenant, user: 'u' }).ask(question, new AbortController().signal, 5_000);
    void ask('acme').catch(() => undefined);
    void ask('acme').catch(() => undefined);
    await expect(ask('acme')).rejects.toThrow('more than 2 calls of this tenant wait');
    void ask('globex').catch(() => undefined);
    expect(calls.size()).toBe(3);
  });

  it('cancels the call when the request waiting on it goes away', async () => {
    const [a] = replicas();
    const call = a.create(alice);
    const request = new AbortController();
    const waiting = call.next(Cancellation.of(request.signal), undefined);
    request.abort();
    expect(call.signal.aborted).toBe(true);
    call.settle({ kind: 'failed', error: { code: -32603, message: 'cancelled' } });
    expect(await waiting).toMatchObject({ kind: 'failed' });
  });
});
