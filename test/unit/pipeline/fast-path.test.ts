import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createPolicyChain } from '../../../src/pipeline/chain.js';
import type { PolicyMetrics } from '../../../src/pipeline/metrics.js';
import { makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

const baseDir = fileURLToPath(new URL('../../fixtures/', import.meta.url));

function recordingMetrics(): PolicyMetrics & { decisions: string[] } {
  const decisions: string[] = [];
  const decision = (policy: string, outcome: string): void => void decisions.push(`${policy}:${outcome}`);
  return { decisions, decision, decisionCell: (policy, outcome) => ({ inc: () => decision(policy, outcome) }), batchGroup() {}, circuitState() {}, rateLimited() {}, upstreamCall() {} };
}

describe('chains composed per tool', () => {
  it('count a pass for every policy a plain tool goes through, inert layers included, in chain order', async () => {
    const metrics = recordingMetrics();
    const chain = await createPolicyChain({ tenantPolicies: { 'rate-limit': { limit: 10 } }, deps: { ...makeDeps(), metrics }, baseDir });
    const result = await chain(makeCall(makeTool()), makeCtx(), recordingTerminal());
    expect(result.ok).toBe(true);
    expect(metrics.decisions).toEqual(['audit:pass', 'rate-limit:pass', 'access:pass', 'bind-arguments:pass', 'max-depth:pass', 'circuit-breaker:pass', 'retry:pass', 'timeout:pass']);
  });

  it('stop at an inline gate that answers: its decision is counted and nothing inside it runs', async () => {
    const metrics = recordingMetrics();
    const deps = { ...makeDeps(), metrics };
    const chain = await createPolicyChain({ tenantPolicies: { 'max-depth': { limit: 1 } }, deps, baseDir });
    const terminal = recordingTerminal();
    const result = await chain(makeCall(makeTool()), makeCtx({ depth: 2 }), terminal);
    expect(result.error?.errorType).toBe('DEPTH_EXCEEDED');
    expect(metrics.decisions).toEqual(['audit:pass', 'access:pass', 'bind-arguments:pass', 'max-depth:DEPTH_EXCEEDED']);
    expect(terminal.calls).toHaveLength(0);
    expect(deps.audit.events.map((e) => e.outcome)).toEqual(['DEPTH_EXCEEDED']);
  });

  it('still run the layers a tool needs: bindings of that tool are applied', async () => {
    const chain = await createPolicyChain({ deps: makeDeps(), baseDir });
    const terminal = recordingTerminal();
    await chain(makeCall(makeTool({ name: 'plain' })), makeCtx(), terminal);
    await chain(makeCall(makeTool({ name: 'bound', bindings: { owner: '${principal.user}' } })), makeCtx(), terminal);
    expect(terminal.calls.map((call) => call.arguments)).toEqual([{}, { owner: 'alice' }]);
  });
});
