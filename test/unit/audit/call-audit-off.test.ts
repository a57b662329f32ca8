// The call's audit wrap computes the arguments' digest for the event it writes, and only then: with the sink
// off nothing reads the arguments (a megabyte of them is ~2 ms of hashing).
import { describe, expect, it } from 'vitest';
import { auditAround } from '../../../src/audit/call-audit.js';
import { argumentsHash } from '../../../src/audit/events.js';
import type { AuditEvent, AuditSink } from '../../../src/audit/types.js';
import { successResult } from '../../../src/call/tool-result.js';
import type { Next, PolicyContext, ToolCall } from '../../../src/call/types.js';

/** Arguments that count how often their value is read. */
function countedArguments(): { args: Record<string, unknown>; reads: () => number } {
  let reads = 0;
  const args: Record<string, unknown> = {};
  Object.defineProperty(args, 'title', { enumerable: true, get: () => ((reads += 1), 'x'.repeat(1000)) });
  return { args, reads: () => reads };
}

async function callThrough(sink: AuditSink, args: Record<string, unknown>): Promise<void> {
  const inner: Next = async (call) => successResult(call, 'ok');
  const call = { callId: 'call-1', name: 'create_ticket', arguments: args, tool: { source: 'function' } } as unknown as ToolCall;
  const ctx = { requestId: 'req-1', principal: { tenant: 'acme', user: 'alice' }, cancellation: new AbortController().signal } as unknown as PolicyContext;
  await auditAround(sink, { now: () => 0 })(inner)(call, ctx);
}

describe('the digest of a call\'s arguments', () => {
  it('is not computed while the audit sink is off', async () => {
    const { args, reads } = countedArguments();
    await callThrough({ enabled: false, write() {}, async flush() {}, async close() {} }, args);
    expect(reads()).toBe(0);
  });

  it('is computed once, into the event, while the sink is on', async () => {
    const { args, reads } = countedArguments();
    const events: AuditEvent[] = [];
    await callThrough({ write: (event) => events.push(event), async flush() {}, async close() {} }, args);
    expect(reads()).toBe(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'call', tenant: 'acme', argsSha256: argumentsHash({ title: 'x'.repeat(1000) }) });
  });
});
