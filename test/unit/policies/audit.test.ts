import { describe, expect, it } from 'vitest';
import { auditPolicy } from '../../../policies/audit.js';
import { canonicalJson, sha256Hex } from '../../../src/shared/canonical-json.js';
import { callFailure } from '../../../src/call/tool-result.js';
import type { CallAuditEvent } from '../../../src/audit/types.js';
import { asPolicy, fakeClock, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

describe('audit policy', () => {
  it('writes one event with the hash of the canonical arguments and never the raw values', async () => {
    const deps = makeDeps({ clock: fakeClock() });
    const policy = asPolicy(auditPolicy(undefined, deps));
    const args = { token: 'sk-secret-value', b: 2, a: { z: 1, y: [1, 2] } };
    await policy(makeCall(makeTool(), args), makeCtx(), recordingTerminal());
    expect(deps.audit.events).toHaveLength(1);
    const event = deps.audit.events[0] as CallAuditEvent;
    expect(event).toMatchObject({ event: 'call', errorType: null, requestId: 'req-1', callId: 'call_1', tenant: 'acme', user: 'alice', tool: 'lookup', source: 'function', outcome: 'ok', approvalId: null });
    expect(event.argsSha256).toBe(sha256Hex('{"a":{"y":[1,2],"z":1},"b":2,"token":"sk-secret-value"}'));
    expect(JSON.stringify(event)).not.toContain('sk-secret-value');
  });

  it('hashes arguments independently of key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe(canonicalJson({ a: [{ c: 2, d: 1 }], b: 1 }));
  });

  it('records a denied call with its error type and duration', async () => {
    const clock = fakeClock();
    const deps = makeDeps({ clock });
    const policy = asPolicy(auditPolicy(undefined, deps));
    await policy(makeCall(), makeCtx(), async (call) => {
      clock.advance(25);
      return callFailure(call, 'PERMISSION_DENIED', 'no');
    });
    expect(deps.audit.events[0]).toMatchObject({ outcome: 'PERMISSION_DENIED', errorType: 'PERMISSION_DENIED', durationMs: 25 });
  });

  it("leaves an approved call's run to its approval decision's event (one line per decision)", async () => {
    const deps = makeDeps();
    const policy = asPolicy(auditPolicy(undefined, deps));
    await policy(makeCall(), { ...makeCtx(), approval: { id: 'a1', approvedBy: 'bob' } }, recordingTerminal());
    expect(deps.audit.events).toEqual([]);
  });

  it('records pending approvals with their approval id', async () => {
    const deps = makeDeps();
    const policy = asPolicy(auditPolicy(undefined, deps));
    const call = makeCall();
    await policy(call, makeCtx(), async () => ({ ...callFailure(call, 'TOOL_EXCEPTION', 'x'), error: undefined, status: 'pending_approval' as const, approvalId: 'abc' }));
    expect(deps.audit.events[0]).toMatchObject({ outcome: 'pending_approval', approvalId: 'abc' });
  });

  it('still writes an event when something inside throws', async () => {
    const deps = makeDeps();
    const policy = asPolicy(auditPolicy(undefined, deps));
    await expect(policy(makeCall(), makeCtx(), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(deps.audit.events.map((e) => e.outcome)).toEqual(['TOOL_EXCEPTION']);
  });

  it('refuses unknown options', () => {
    expect(() => asPolicy(auditPolicy({ level: 'all' }, makeDeps()))).toThrow(/policies\.audit\.level is not a known option/);
  });
});
