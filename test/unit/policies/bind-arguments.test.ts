import { describe, expect, it } from 'vitest';
import { bindArgumentsPolicy } from '../../../policies/bind-arguments.js';
import { asPolicy, alice, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

const rag = makeTool({ name: 'knowledge_search', bindings: { filter: { tenant: '${principal.tenant}', department: '${claims.department}' } } });

describe('bind-arguments policy', () => {
  it('overwrites a filter the model sent with the one bound from the token', async () => {
    const terminal = recordingTerminal();
    await asPolicy(bindArgumentsPolicy(undefined, makeDeps()))(makeCall(rag, { query: 'q', filter: { tenant: 'globex' } }), makeCtx(), terminal);
    expect(terminal.calls[0]!.arguments).toEqual({ query: 'q', filter: { tenant: 'acme', department: 'sales' } });
  });

  it('merges tenant bindings by glob over the tool bindings', async () => {
    const terminal = recordingTerminal();
    const policy = asPolicy(bindArgumentsPolicy({ bindings: { 'knowledge_*': { topK: 3 }, knowledge_search: { filter: { tenant: 'acme-fixed' } } } }, makeDeps()));
    await policy(makeCall(rag, { query: 'q' }), makeCtx(), terminal);
    expect(terminal.calls[0]!.arguments).toEqual({ query: 'q', topK: 3, filter: { tenant: 'acme-fixed' } });
  });

  it('fails closed with PERMISSION_DENIED when the token lacks a bound claim', async () => {
    const terminal = recordingTerminal();
    const ctx = makeCtx({ principal: { ...alice, claims: { sub: 'alice' } } });
    const result = await asPolicy(bindArgumentsPolicy(undefined, makeDeps()))(makeCall(rag, { query: 'q' }), ctx, terminal);
    expect(result.error?.errorType).toBe('PERMISSION_DENIED');
    expect(result.error?.error).toContain('department');
    expect(terminal.calls).toHaveLength(0);
  });

  it('leaves unbound tools untouched', async () => {
    const terminal = recordingTerminal();
    const call = makeCall(makeTool(), { a: '${principal.tenant}' });
    await asPolicy(bindArgumentsPolicy(undefined, makeDeps()))(call, makeCtx(), terminal);
    expect(terminal.calls[0]).toBe(call);
  });
});
