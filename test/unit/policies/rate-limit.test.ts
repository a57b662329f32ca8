import { describe, expect, it } from 'vitest';
import { rateLimitPolicy } from '../../../policies/rate-limit.js';
import { alice, bob, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

describe('rate-limit policy', () => {
  it('allows `limit` calls per user and answers RATE_LIMITED with retryAfterMs after that', async () => {
    const deps = makeDeps();
    const policy = rateLimitPolicy({ limit: 2, windowMs: 60_000, per: 'user' }, deps);
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
    const policy = rateLimitPolicy({ limit: 1, per: 'tenant' }, makeDeps());
    const terminal = recordingTerminal();
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(), makeCtx({ principal: bob }), terminal)).ok).toBe(false);
    expect((await policy(makeCall(), makeCtx({ principal: { ...alice, tenant: 'globex' } }), terminal)).ok).toBe(true);
  });

  it('combines dimensions: per user and tool counts each pair separately', async () => {
    const policy = rateLimitPolicy({ limit: 1, per: ['user', 'tool'] }, makeDeps());
    const terminal = recordingTerminal();
    expect((await policy(makeCall(makeTool({ name: 'a' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'b' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'a' })), makeCtx(), terminal)).ok).toBe(false);
  });

  it('counts only tools matching its globs and does not count a resumed approved call', async () => {
    const policy = rateLimitPolicy({ limit: 1, tools: ['write_*'] }, makeDeps());
    const terminal = recordingTerminal();
    for (let i = 0; i < 3; i++) expect((await policy(makeCall(makeTool({ name: 'read_x' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'write_x' })), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'write_x' })), makeCtx({ approval: { id: 'x', approvedBy: 'bob' } }), terminal)).ok).toBe(true);
    expect((await policy(makeCall(makeTool({ name: 'write_x' })), makeCtx(), terminal)).ok).toBe(false);
  });

  it('is a no-op without options and fails fast on bad ones', async () => {
    const policy = rateLimitPolicy(undefined, makeDeps());
    for (let i = 0; i < 5; i++) expect((await policy(makeCall(), makeCtx(), recordingTerminal())).ok).toBe(true);
    expect(() => rateLimitPolicy({ limit: 5, per: 'ip' }, makeDeps())).toThrow(/policies\.rate-limit\.per/);
    expect(() => rateLimitPolicy({ windowMs: 5 }, makeDeps())).toThrow(/limit/);
  });
});
