import { describe, expect, it } from 'vitest';
import { maxDepthPolicy } from '../../../policies/max-depth.js';
import { asPolicy, makeCall, makeCtx, makeDeps, recordingTerminal } from '../../helpers/policy-fixtures.js';

describe('max-depth policy', () => {
  it('allows depth up to the default limit of 4 and refuses 5', async () => {
    const policy = asPolicy(maxDepthPolicy(undefined, makeDeps()));
    const terminal = recordingTerminal();
    expect((await policy(makeCall(), makeCtx({ depth: 4 }), terminal)).ok).toBe(true);
    const refused = await policy(makeCall(), makeCtx({ depth: 5 }), terminal);
    expect(refused.error?.errorType).toBe('DEPTH_EXCEEDED');
    expect(terminal.calls).toHaveLength(1);
  });

  it('honours a configured limit', async () => {
    const policy = asPolicy(maxDepthPolicy({ limit: 0 }, makeDeps()));
    expect((await policy(makeCall(), makeCtx({ depth: 1 }), recordingTerminal())).error?.errorType).toBe('DEPTH_EXCEEDED');
  });

  it('fails fast on a bad limit, naming the key', () => {
    expect(() => asPolicy(maxDepthPolicy({ limit: -1 }, makeDeps()))).toThrow(/policies\.max-depth\.limit/);
  });
});
