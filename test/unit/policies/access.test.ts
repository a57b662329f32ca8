import { describe, expect, it } from 'vitest';
import { accessPolicy } from '../../../policies/access.js';
import { asPolicy, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

describe('access policy', () => {
  it('passes a call the live config allows', async () => {
    const terminal = recordingTerminal();
    const result = await asPolicy(accessPolicy(undefined, makeDeps()))(makeCall(), makeCtx(), terminal);
    expect(result.ok).toBe(true);
    expect(terminal.calls).toHaveLength(1);
  });

  it('denies with the reason from the config re-check and never runs the tool', async () => {
    const terminal = recordingTerminal();
    const ctx = makeCtx({ checkAccess: (tool) => ({ ok: false, reason: `${tool.name} is denied for tenant acme` }) });
    const result = await asPolicy(accessPolicy(undefined, makeDeps()))(makeCall(), ctx, terminal);
    expect(result.error).toEqual({ errorType: 'PERMISSION_DENIED', error: 'lookup is denied for tenant acme' });
    expect(terminal.calls).toHaveLength(0);
  });

  it("denies a tool whose own permission is 'deny' even when config allows it", async () => {
    const terminal = recordingTerminal();
    const result = await asPolicy(accessPolicy(undefined, makeDeps()))(makeCall(makeTool({ permission: 'deny' })), makeCtx(), terminal);
    expect(result.error?.errorType).toBe('PERMISSION_DENIED');
    expect(terminal.calls).toHaveLength(0);
  });
});
