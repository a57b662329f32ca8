import { describe, expect, it } from 'vitest';
import { approvalPolicy } from '../../../policies/approval.js';
import { unavailableStore } from '../../helpers/memory-store.js';
import { asPolicy, alice, bob, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

describe('approval policy', () => {
  it('parks a matching call as pending_approval and does not run it', async () => {
    const deps = makeDeps();
    const terminal = recordingTerminal();
    const tool = makeTool({ name: 'create_ticket' });
    const result = await asPolicy(approvalPolicy({ tools: ['create_*'] }, deps))(makeCall(tool, { title: 't' }), makeCtx(), terminal);
    expect(result).toMatchObject({ ok: false, status: 'pending_approval', name: 'create_ticket', callId: 'call_1' });
    expect(result.error).toBeUndefined();
    expect(result.output).toContain(result.approvalId!);
    expect(terminal.calls).toHaveLength(0);
    const record = await deps.approvals.get(result.approvalId!, bob);
    expect(record).toMatchObject({ status: 'pending', tenant: 'acme', requester: { user: 'alice' }, call: { name: 'create_ticket', arguments: { title: 't' } } });
    expect(record.expiresAt - record.createdAt).toBe(900_000);
  });

  it('lets a resumed approved call through once it carries ctx.approval', async () => {
    const terminal = recordingTerminal();
    const policy = asPolicy(approvalPolicy({ tools: ['create_ticket'] }, makeDeps()));
    const result = await policy(makeCall(makeTool({ name: 'create_ticket' })), makeCtx({ approval: { id: 'a', approvedBy: 'bob' } }), terminal);
    expect(result.ok).toBe(true);
    expect(terminal.calls).toHaveLength(1);
  });

  it('passes tools that do not match, and everything without options', async () => {
    const terminal = recordingTerminal();
    expect((await asPolicy(approvalPolicy({ tools: ['create_*'] }, makeDeps()))(makeCall(), makeCtx(), terminal)).ok).toBe(true);
    expect((await asPolicy(approvalPolicy(undefined, makeDeps()))(makeCall(makeTool({ name: 'create_ticket' })), makeCtx({ principal: alice }), terminal)).ok).toBe(true);
  });

  it('fails closed with a clear UPSTREAM_ERROR when the request cannot be stored, and does not run the call', async () => {
    const terminal = recordingTerminal();
    const policy = asPolicy(approvalPolicy({ tools: ['create_*'] }, makeDeps({ store: unavailableStore() })));
    const result = await policy(makeCall(makeTool({ name: 'create_ticket' })), makeCtx(), terminal);
    expect(result).toMatchObject({ ok: false, error: { errorType: 'UPSTREAM_ERROR' }, retryAfterMs: 1000 });
    expect(result.error?.error).toMatch(/needs human approval, which cannot be requested while the state store is unavailable; the call did not run/);
    expect(result.status).toBeUndefined();
    expect(terminal.calls).toHaveLength(0);
  });
});
