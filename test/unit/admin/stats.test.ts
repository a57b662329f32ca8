import { describe, expect, it } from 'vitest';
import { createCallStats } from '../../../src/admin/stats.js';
import type { ApprovalAuditEvent, AuditEvent, CallAuditEvent, CatalogAuditEvent } from '../../../src/audit/types.js';

const NOW = 1_800_000_000_000;
const call = (tool: string, outcome: CallAuditEvent['outcome'], extra: Partial<CallAuditEvent> = {}): CallAuditEvent => ({
  event: 'call', time: NOW, requestId: 'r', callId: `c-${tool}-${outcome}`, tenant: 'acme', user: 'alice', tool, source: 'function',
  argsSha256: null, outcome, errorType: outcome === 'ok' || outcome === 'pending_approval' || outcome === 'cancelled' ? null : outcome, durationMs: 3, approvalId: null, ...extra,
});
const decision = (decided: ApprovalAuditEvent['decision'], outcome: ApprovalAuditEvent['outcome'], durationMs: number): ApprovalAuditEvent => ({
  event: 'approval', time: NOW, requestId: 'r', tenant: 'acme', user: 'bob', decision: decided, approvalId: 'a1', requester: 'alice',
  tool: 'send_announcement', callId: 'c-send', source: 'function', outcome, errorType: outcome === 'ok' ? null : outcome, durationMs,
});
const failedRead: CatalogAuditEvent = {
  event: 'resource_read', time: NOW, requestId: 'r', tenant: 'acme', user: 'alice', name: 'global/docs/x', service: null, via: 'rest', argsSha256: null, outcome: 'UNKNOWN_RESOURCE', errorType: 'UNKNOWN_RESOURCE', durationMs: 1,
};

const sum = (values: number[]) => values.reduce((s, n) => s + n, 0);

describe('the per-minute call stats behind the console Overview', () => {
  it("count every call that ended, refusals included: the Audit page's failed call and approval lines of the hour", () => {
    const stats = createCallStats({ now: () => NOW });
    const events: AuditEvent[] = [
      call('get_weather', 'ok'),
      call('get_weather', 'UPSTREAM_ERROR'), // ran and failed
      call('get_weather', 'VALIDATION_ERROR'), // refused by the chain
      call('no_such_tool', 'UNKNOWN_TOOL', { source: null }), // refused before any tool
      call('send_announcement', 'pending_approval'), // waits: not ended yet
      decision('deny', 'APPROVAL_DENIED', 40_000), // ends the waiting call unrun
      decision('approve', 'refused', 5), // a decision not taken ends no call
      failedRead, // no tool call
    ];
    for (const event of events) stats.record(event);
    const view = stats.view('acme');
    // The lines the Audit page shows red, less the refused decision and the resource read (no calls).
    const failedCalls = events.filter((e) => (e.event === 'call' || e.event === 'approval') && !['ok', 'pending_approval', 'refused'].includes(e.outcome));
    expect(failedCalls).toHaveLength(4);
    expect(sum(view.total.errors)).toBe(4);
    expect(sum(view.total.calls)).toBe(5);
    // The name the caller made up is never a series name.
    expect(view.tools.map((t) => t.tool)).toEqual(['(not resolved to a tool)', 'get_weather', 'send_announcement']);
    // A denial's duration is the decision's, not a run's: it stays out of the latency.
    const denied = view.tools.find((t) => t.tool === 'send_announcement')!;
    expect([sum(denied.calls), sum(denied.errors), denied.p95Ms.at(-1)]).toEqual([1, 1, null]);
    expect(view.tools.find((t) => t.tool === 'get_weather')!.p95Ms.at(-1)).toBe(5);
  });

  it("keeps one tenant's calls out of another's view", () => {
    const stats = createCallStats({ now: () => NOW });
    stats.record(call('no_such_tool', 'UNKNOWN_TOOL', { source: null }));
    expect(stats.view('globex').tools).toEqual([]);
    expect(sum(stats.view('globex').total.errors)).toBe(0);
  });
});
