import { describe, expect, it } from 'vitest';
import { budgetPolicy } from '../../../policies/budget.js';
import { builtinPolicies } from '../../../policies/index.js';
import { failureResult, successResult } from '../../../src/call/tool-result.js';
import { createPolicyChain } from '../../../src/pipeline/chain.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { ToolResult } from '../../../src/call/types.js';
import { alice, asPolicy, bob, fakeClock, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

// 2026-03-10 12:00 UTC: a Tuesday, midday.
const NOON = Date.parse('2026-03-10T12:00:00Z');

function setup(options: unknown, start = NOON) {
  const clock = fakeClock(start);
  const store = createMemoryStore({ now: clock.now });
  const deps = makeDeps({ store, clock });
  const answered: ToolResult[] = [];
  return { clock, store, deps, answered, policy: asPolicy(budgetPolicy(options, deps), answered) };
}

describe('budget policy', () => {
  it('refuses the call past a daily call budget with QUOTA_EXCEEDED and its reset, and answers again the next day', async () => {
    const { clock, policy } = setup({ budgets: [{ id: 'daily', scope: 'user', period: 'day', calls: 2 }] });
    const terminal = recordingTerminal();
    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push(await policy(makeCall(), makeCtx(), terminal));
    expect(outcomes.map((r) => r.ok)).toEqual([true, true, false]);
    const refused = outcomes[2]!;
    expect(refused.error?.errorType).toBe('QUOTA_EXCEEDED');
    expect(refused.error?.error).toContain('2026-03-11T00:00:00.000Z');
    expect(refused.retryAfterMs).toBe(12 * 3_600_000);
    expect(refused.budget).toEqual({ id: 'daily', unit: 'calls', limit: 2, remaining: 0, resetAt: '2026-03-11T00:00:00.000Z' });
    expect(terminal.calls).toHaveLength(2);
    // Another user has a budget of their own.
    expect((await policy(makeCall(), makeCtx({ principal: bob }), terminal)).ok).toBe(true);
    clock.advance(11 * 3_600_000);
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(false);
    clock.advance(3_600_000);
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
  });

  it('starts the day at midnight in the configured time zone', async () => {
    // 23:30 UTC on the 10th is 00:30 on the 11th in Berlin (UTC+1 in March before the switch).
    const { clock, policy } = setup({ budgets: [{ id: 'berlin', scope: 'user', period: 'day', calls: 1, timeZone: 'Europe/Berlin' }] }, Date.parse('2026-03-10T22:30:00Z'));
    const terminal = recordingTerminal();
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    const refused = await policy(makeCall(), makeCtx(), terminal);
    expect(refused.budget?.resetAt).toBe('2026-03-10T23:00:00.000Z');
    clock.advance(30 * 60_000);
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
  });

  it('charges a cost budget the configured cost of each tool, and a returned cost clamped to its max', async () => {
    const search = makeTool({ name: 'web_search' });
    const llm = makeTool({ name: 'summarise', handler: () => ({ output: 'done', trace: { 'toolgate/cost': 7 } }) });
    const greedy = makeTool({ name: 'greedy', handler: () => ({ output: 'done', trace: { _meta: { 'toolgate/cost': 1e9 } } }) });
    const { policy, store } = setup({
      budgets: [{ id: 'spend', scope: 'tenant', period: 'month', cost: 100 }],
      toolCosts: { web_search: 5, summarise: { cost: 1, max: 50 }, 'gree*': { cost: 2, max: 20 } },
    });
    const terminal = recordingTerminal();
    const usage = async () => (await store.chargeCounters({ counters: [{ keys: [`{acme}:budget:spend:*:p=${Date.parse('2026-03-01T00:00:00Z')}`], amount: 0, expiresAt: Infinity }] })).used[0];
    await policy(makeCall(search), makeCtx(), terminal);
    expect(await usage()).toBe(5);
    await policy(makeCall(llm), makeCtx(), terminal);
    expect(await usage()).toBe(12);
    await policy(makeCall(greedy), makeCtx({ principal: bob }), terminal);
    expect(await usage()).toBe(32);
    // 32 + 5 * 13 = 97; the 14th search would make 102.
    for (let i = 0; i < 13; i += 1) expect((await policy(makeCall(search), makeCtx(), terminal)).ok).toBe(true);
    const refused = await policy(makeCall(search), makeCtx(), terminal);
    expect(refused.error?.errorType).toBe('QUOTA_EXCEEDED');
    expect(await usage()).toBe(97);
  });

  it('charges a call once however many times retry runs it', async () => {
    const clock = fakeClock(NOON);
    const store = createMemoryStore({ now: clock.now });
    let attempts = 0;
    const flaky = makeTool({ name: 'flaky', readOnly: true });
    const terminal = async (call: Parameters<typeof successResult>[0]) => {
      attempts += 1;
      if (attempts < 3) return failureResult('UPSTREAM_ERROR', 'try again', { callId: call.callId, name: call.name, source: call.tool.source });
      return successResult(call, 'finally');
    };
    const chain = await createPolicyChain({
      builtins: builtinPolicies,
      tenantPolicies: { retry: { attempts: 3, baseMs: 0, maxMs: 0 }, budget: { budgets: [{ id: 'once', scope: 'user', period: 'day', calls: 10 }] } },
      deps: makeDeps({ store, clock }),
      baseDir: process.cwd(),
      terminal,
    });
    expect(chain.policies.indexOf('budget')).toBeLessThan(chain.policies.indexOf('retry'));
    const result = await chain(makeCall(flaky), makeCtx());
    expect(result.ok).toBe(true);
    expect(attempts).toBe(3);
    const day = Date.parse('2026-03-10T00:00:00Z');
    expect((await store.chargeCounters({ counters: [{ keys: [`{acme}:budget:once:u=alice:p=${day}`], amount: 0, expiresAt: Infinity }] })).used).toEqual([1]);
  });

  it('refunds a call that failed for the upstream when configured, and charges it otherwise', async () => {
    const failing = makeTool({ name: 'down' });
    const fails = async (call: Parameters<typeof successResult>[0]) => failureResult('UPSTREAM_ERROR', 'down', { callId: call.callId, name: call.name, source: call.tool.source });
    for (const [onUpstreamFailure, expected] of [['refund', [true, true, true]], ['charge', [true, false, false]]] as const) {
      const { policy } = setup({ budgets: [{ id: 'b', scope: 'user', period: 'day', calls: 1, onUpstreamFailure }] });
      const outcomes = [];
      for (let i = 0; i < 3; i += 1) outcomes.push((await policy(makeCall(failing), makeCtx(), fails)).error?.errorType !== 'QUOTA_EXCEEDED');
      expect(outcomes).toEqual(expected);
    }
  });

  it('audits the warn threshold crossing once per period and tells the budget left on each call past it', async () => {
    const { clock, policy, deps } = setup({ budgets: [{ id: 'warned', scope: 'tenant', period: 'day', calls: 4, warnAt: 0.5 }] });
    const terminal = recordingTerminal();
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await policy(makeCall(), makeCtx({ principal: i % 2 ? bob : alice }), terminal));
    expect(results.map((r) => r.budget?.remaining)).toEqual([undefined, 2, 1, 0]);
    const warnings = () => deps.audit.events.filter((event) => event.event === 'budget');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ tenant: 'acme', user: 'bob', kind: 'warn', budget: 'warned', used: 2, limit: 4, resetAt: '2026-03-11T00:00:00.000Z' });
    clock.advance(86_400_000);
    for (let i = 0; i < 4; i += 1) await policy(makeCall(), makeCtx(), terminal);
    expect(warnings()).toHaveLength(2);
  });

  it('parks the call past an approve-mode budget for a human, and the approved call runs and is charged', async () => {
    const { policy, deps } = setup({ budgets: [{ id: 'approve', scope: 'tenant', period: 'month', calls: 1, onLimit: 'approve' }] });
    const terminal = recordingTerminal();
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    const parked = await policy(makeCall(), makeCtx(), terminal);
    expect(parked.status).toBe('pending_approval');
    expect(parked.output).toContain('past budget approve');
    expect(terminal.calls).toHaveLength(1);
    const record = await deps.approvals.get(parked.approvalId!, alice);
    expect(record?.call.name).toBe('lookup');
    const resumed = await policy(makeCall(), makeCtx({ approval: { id: parked.approvalId!, approvedBy: 'bob' } }), terminal);
    expect(resumed.ok).toBe(true);
    expect(resumed.budget?.remaining).toBe(0);
    expect(terminal.calls).toHaveLength(2);
  });

  it("never charges one tenant's budget for another tenant's calls to tools of the same name", async () => {
    const { policy } = setup({ budgets: [{ id: 'shared-name', scope: 'tenant', period: 'day', calls: 2, tools: ['web_search'] }] });
    const search = makeTool({ name: 'web_search' });
    const terminal = recordingTerminal();
    const globex = { ...alice, tenant: 'globex' };
    for (let i = 0; i < 2; i += 1) expect((await policy(makeCall(search), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(search), makeCtx(), terminal)).ok).toBe(false);
    for (let i = 0; i < 2; i += 1) expect((await policy(makeCall(search), makeCtx({ principal: globex }), terminal)).ok).toBe(true);
    expect((await policy(makeCall(search), makeCtx({ principal: globex }), terminal)).ok).toBe(false);
    // A tool the budget does not name is not counted.
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
  });

  it('counts role budgets only for callers holding the role, and fails fast on a bad budget', async () => {
    const { policy } = setup({ budgets: [{ id: 'approvers', scope: 'role', role: 'approver', period: 'week', calls: 1 }] });
    const terminal = recordingTerminal();
    for (let i = 0; i < 3; i += 1) expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(), makeCtx({ principal: bob }), terminal)).ok).toBe(true);
    expect((await policy(makeCall(), makeCtx({ principal: bob }), terminal)).ok).toBe(false);
    const deps = makeDeps();
    expect(() => budgetPolicy({ budgets: [{ scope: 'user', period: 'day' }] }, deps)).toThrow(/budgets\.0 needs exactly one of calls and cost/);
    expect(() => budgetPolicy({ budgets: [{ scope: 'user', period: 'day', calls: 1, timeZone: 'Mars/Olympus' }] }, deps)).toThrow(/budgets\.0\.timeZone/);
    expect(() => budgetPolicy({ budgets: [{ scope: 'toolset', toolset: 'nope', period: 'day', calls: 1 }] }, deps)).toThrow(/budgets\.0\.toolset/);
  });

  it('counts a rolling window in steps of a twelfth of it', async () => {
    const { clock, policy } = setup({ budgets: [{ id: 'rolling', scope: 'user', period: 'rolling', windowMs: 3_600_000, calls: 2 }] });
    const terminal = recordingTerminal();
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    clock.advance(30 * 60_000);
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(false);
    // The first call leaves the window an hour (plus at most one step) after it was made.
    clock.advance(35 * 60_000);
    expect((await policy(makeCall(), makeCtx(), terminal)).ok).toBe(true);
  });
});
