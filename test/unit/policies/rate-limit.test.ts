import { describe, expect, it } from 'vitest';
import { rateLimitPolicy } from '../../../policies/rate-limit.js';
import { createTestStore, unavailableStore } from '../../helpers/memory-store.js';
import { asPolicy, alice, bob, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

describe('rate-limit policy', () => {
  it('allows `limit` calls per user and answers RATE_LIMITED with retryAfterMs after that', async () => {
    const deps = makeDeps();
    const policy = asPolicy(rateLimitPolicy({ limit: 2, windowMs: 60_000, per: 'user' }, deps));
    const terminal = recordingTerminal();
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await policy(makeCall(), makeCtx(), terminal));
    expect(outcomes.map((r) => r.ok)).toEqual([true, true, false]);
    expect(outcomes[2]!.error?.errorType).toBe('RATE_LIMITED');
    expect(outcomes[2]!.retryAfterMs).toBeGreaterThan(0);
    expect(terminal.calls).toHaveLength(2);
    // another user has their own budget
    expect((await policy(makeCall(), makeCtx({ principal: bob }), terminal)).ok).toBe(true);
  });

  it('shares one budget across users when per is tenant, but never across tenants', async () => {
    const policy = asPolicy(rateLimitPolicy({ limit: 1, per: 'tenant' }, makeDeps()));
    const terminal = recordingTerminal();
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(), makeCtx({ principal: bob }), terminal)).ok).toBe(false);
    expect((await policy(makeCall(), makeCtx({ principal: { ...alice, tenant: 'globex' } }), terminal)).ok).toBe(true);
  });

  it('combines dimensions: per user and tool counts each pair separately', async () => {
    const policy = asPolicy(rateLimitPolicy({ limit: 1, per: ['user', 'tool'] }, makeDeps()));
    const terminal = recordingTerminal();
    expect((await policy(makeCall(makeTool({ name: 'a' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'b' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'a' })), makeCtx(), terminal)).ok).toBe(false);
  });

  it('counts only tools matching its globs and does not count a resumed approved call', async () => {
    const policy = asPolicy(rateLimitPolicy({ limit: 1, tools: ['write_*'] }, makeDeps()));
    const terminal = recordingTerminal();
    for (let i = 0; i < 3; i++) expect((await policy(makeCall(makeTool({ name: 'read_x' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'write_x' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'write_x' })), makeCtx({ approval: { id: 'x', approvedBy: 'bob' } }), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'write_x' })), makeCtx(), terminal)).ok).toBe(false);
  });

  it('is a no-op without options and fails fast on bad ones', async () => {
    const policy = asPolicy(rateLimitPolicy(undefined, makeDeps()));
    for (let i = 0; i < 5; i++) expect((await policy(makeCall(), makeCtx(), recordingTerminal())).ok).toBe(true);
    expect(() => asPolicy(rateLimitPolicy({ limit: 5, per: 'ip' }, makeDeps()))).toThrow(/policies\.rate-limit\.per/);
    expect(() => asPolicy(rateLimitPolicy({ windowMs: 5 }, makeDeps()))).toThrow(/limit/);
  });

  it('hands the call on only after the store has counted it, and refuses once the store says the window is full', async () => {
    const terminal = recordingTerminal();
    const store = createTestStore();
    let hits = 0;
    store.hitWindow = async () => ({ allowed: ++hits <= 1, count: hits, retryAfterMs: hits <= 1 ? 0 : 10 });
    const remote = asPolicy(rateLimitPolicy({ limit: 1 }, makeDeps({ store })));
    const waited = remote(makeCall(), makeCtx(), terminal);
    expect(terminal.calls).toHaveLength(0);
    expect((await waited).ok).toBe(true);
    expect(terminal.calls).toHaveLength(1);
    const refused = await remote(makeCall(), makeCtx(), terminal);
    expect(refused.error?.errorType).toBe('RATE_LIMITED');
    expect(refused.retryAfterMs).toBe(10);
    expect(terminal.calls).toHaveLength(1);
  });

  it('keys the window by tenant, user and tool exactly as before (counters survive a rolling upgrade)', async () => {
    const store = createTestStore();
    const keys: string[] = [];
    store.hitWindow = async (key) => {
      keys.push(key);
      return { allowed: true, count: 1, retryAfterMs: 0 };
    };
    const terminal = recordingTerminal();
    const odd = { ...alice, user: 'x@y|z' };
    await asPolicy(rateLimitPolicy({ limit: 3, windowMs: 1000, per: ['user', 'tool'] }, makeDeps({ store })))(makeCall(makeTool({ name: 'a-b' })), makeCtx({ principal: odd }), terminal);
    await asPolicy(rateLimitPolicy({ limit: 3, windowMs: 1000, per: 'tenant' }, makeDeps({ store })))(makeCall(), makeCtx({ principal: odd }), terminal);
    await asPolicy(rateLimitPolicy({ limit: 3, windowMs: 1000, per: 'tool' }, makeDeps({ store })))(makeCall(makeTool({ name: 'a-b' })), makeCtx(), terminal);
    expect(keys).toEqual([`ratelimit:1000:3:t=${alice.tenant}|u=x%40y%7Cz|n=a-b`, `ratelimit:1000:3:t=${alice.tenant}`, `ratelimit:1000:3:t=${alice.tenant}|n=a-b`]);
  });

  it('follows store.onUnavailable while the store does not answer: fail-closed (the default) refuses, fail-open admits uncounted', async () => {
    const terminal = recordingTerminal();
    for (const setting of [undefined, 'fail-closed'] as const) {
      const refused = await asPolicy(rateLimitPolicy({ limit: 5 }, makeDeps({ store: unavailableStore(), onStoreUnavailable: setting })))(makeCall(), makeCtx(), terminal);
      expect(refused.error?.errorType).toBe('RATE_LIMITED');
      expect(refused.error?.error).toMatch(/state store is unavailable/);
      expect(refused.retryAfterMs).toBe(1000);
    }
    expect(terminal.calls).toHaveLength(0);
    const admitted = await asPolicy(rateLimitPolicy({ limit: 5 }, makeDeps({ store: unavailableStore(), onStoreUnavailable: 'fail-open' })))(makeCall(), makeCtx(), terminal);
    expect(admitted.ok).toBe(true);
    expect(terminal.calls).toHaveLength(1);
  });

  it('does not take any other store failure for an outage', async () => {
    const broken = { ...createTestStore(), hitWindow: () => Promise.reject(new Error('WRONGTYPE bug')) };
    const policy = asPolicy(rateLimitPolicy({ limit: 5 }, makeDeps({ store: broken, onStoreUnavailable: 'fail-open' })));
    await expect(policy(makeCall(), makeCtx(), recordingTerminal())).rejects.toThrow(/WRONGTYPE/);
  });
});
