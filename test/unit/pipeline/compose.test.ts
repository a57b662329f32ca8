import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtinPolicies } from '../../../policies/index.js';
import { createPolicyChain, type PolicyChainOptions } from '../../../src/pipeline/chain.js';
import type { PolicyMetrics } from '../../../src/pipeline/policy-metrics.js';
import type { BuiltinPolicies, PolicyLayer } from '../../../src/pipeline/types.js';
import { callFailure, successResult } from '../../../src/call/tool-result.js';
import type { Next } from '../../../src/pipeline/types.js';
import { makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

const baseDir = fileURLToPath(new URL('../../fixtures/', import.meta.url));

function recordingMetrics(): PolicyMetrics & { decisions: string[] } {
  const decisions: string[] = [];
  const decision = (policy: string, outcome: string): void => void decisions.push(`${policy}:${outcome}`);
  return { decisions, decision, decisionCell: (policy, outcome) => ({ inc: () => decision(policy, outcome) }), batchGroup() {}, circuitState() {}, rateLimited() {}, budget() {}, upstreamCall() {}, knownTenants() {}, cedarDecision() {} };
}

function build(options: Partial<PolicyChainOptions>) {
  return createPolicyChain({ builtins: builtinPolicies, deps: makeDeps(), baseDir, terminal: recordingTerminal(), ...options });
}

/** The built-ins with `retry` replaced by a layer that applies to tools named `spy*` and records each wrap and run. */
function withSpy(): { builtins: BuiltinPolicies; wraps: string[]; runs: string[] } {
  const wraps: string[] = [];
  const runs: string[] = [];
  const spy: PolicyLayer = {
    appliesTo: (tool) => tool.name.startsWith('spy'),
    wrap: (next) => {
      wraps.push('wrap');
      return (call, ctx) => {
        runs.push(call.name);
        return next(call, ctx);
      };
    },
  };
  return { builtins: { ...builtinPolicies, retry: () => spy }, wraps, runs };
}

describe('chains composed per tool', () => {
  it('count a pass for every policy a plain tool goes through, layers left out included, in chain order', async () => {
    const metrics = recordingMetrics();
    const chain = await build({ tenantPolicies: { 'rate-limit': { limit: 10 } }, deps: { ...makeDeps(), metrics } });
    const result = await chain(makeCall(makeTool()), makeCtx());
    expect(result.ok).toBe(true);
    // approval has no tools configured: its factory leaves it out, and it counts nothing.
    expect(metrics.decisions).toEqual(['audit:pass', 'rate-limit:pass', 'access:pass', 'bind-arguments:pass', 'max-depth:pass', 'circuit-breaker:pass', 'retry:pass', 'timeout:pass']);
  });

  it('stop at a gate that answers: its decision is counted and nothing inside it runs', async () => {
    const metrics = recordingMetrics();
    const deps = { ...makeDeps(), metrics };
    const terminal = recordingTerminal();
    const chain = await build({ tenantPolicies: { 'max-depth': { limit: 1 } }, deps, terminal });
    const result = await chain(makeCall(makeTool()), makeCtx({ depth: 2 }));
    expect(result.error?.errorType).toBe('DEPTH_EXCEEDED');
    expect(metrics.decisions).toEqual(['audit:pass', 'access:pass', 'bind-arguments:pass', 'max-depth:DEPTH_EXCEEDED']);
    expect(terminal.calls).toHaveLength(0);
    expect(deps.audit.events.map((e) => e.outcome)).toEqual(['DEPTH_EXCEEDED']);
  });

  it('count an answer after a wait (pending approval) under its status, and nothing for the layers inside', async () => {
    const metrics = recordingMetrics();
    const chain = await build({ tenantPolicies: { approval: { tools: ['ticket'] } }, deps: { ...makeDeps(), metrics } });
    const result = await chain(makeCall(makeTool({ name: 'ticket' })), makeCtx());
    expect(result.status).toBe('pending_approval');
    expect(metrics.decisions).toEqual(['audit:pass', 'access:pass', 'bind-arguments:pass', 'approval:pending_approval']);
  });

  it('still run the layers a tool needs: bindings of that tool are applied', async () => {
    const terminal = recordingTerminal();
    const chain = await build({ terminal });
    await chain(makeCall(makeTool({ name: 'plain' })), makeCtx());
    await chain(makeCall(makeTool({ name: 'bound', bindings: { owner: '${principal.user}' } })), makeCtx());
    expect(terminal.calls.map((call) => call.arguments)).toEqual([{}, { owner: 'alice' }]);
  });

  it('wrap each layer once per tool, not per call, and leave a layer out for a tool it does not apply to', async () => {
    const { builtins, wraps, runs } = withSpy();
    const chain = await build({ builtins });
    const spied = makeTool({ name: 'spy_a' });
    const other = makeTool({ name: 'other' });
    for (let i = 0; i < 3; i++) await chain(makeCall(spied), makeCtx());
    for (let i = 0; i < 3; i++) await chain(makeCall(other), makeCtx());
    expect(wraps).toHaveLength(1);
    expect(runs).toEqual(['spy_a', 'spy_a', 'spy_a']);
  });

  it('run every layer for a call under another name than its tool’s, and in chains with custom policies', async () => {
    const aliased = withSpy();
    const chain = await build({ builtins: aliased.builtins });
    const tool = makeTool({ name: 'other' });
    await chain({ ...makeCall(tool), name: 'other_alias' }, makeCtx());
    await chain({ ...makeCall(tool), name: 'other_alias' }, makeCtx());
    expect(aliased.runs).toEqual(['other_alias', 'other_alias']);
    expect(aliased.wraps).toHaveLength(1);

    const withCustom = withSpy();
    const custom = await build({ builtins: withCustom.builtins, tenantPolicies: { custom: [{ module: './tag-policy.mjs', before: 'approval', options: { tag: 'x' } }] } });
    await custom(makeCall(tool), makeCtx());
    expect(withCustom.runs).toEqual(['other']);
  });
});

describe('decisions of the built-in policies', () => {
  const upstreamDown: Next = async (call) => callFailure(call, 'UPSTREAM_ERROR', 'down');

  it('count each built-in answer under its errorType, and only the layers before it as passes', async () => {
    const metrics = recordingMetrics();
    const deps = { ...makeDeps(), metrics };
    const lastOf = async (tenantPolicies: Record<string, unknown>, call = makeCall(), ctx = makeCtx(), terminal: Next = recordingTerminal(), calls = 1): Promise<string[]> => {
      const chain = await build({ tenantPolicies, deps, terminal });
      for (let i = 1; i < calls; i++) await chain(call, ctx);
      metrics.decisions.length = 0;
      await chain(call, ctx);
      return metrics.decisions.filter((d) => !d.endsWith(':pass'));
    };
    expect(await lastOf({ 'rate-limit': { limit: 1 } }, makeCall(), makeCtx(), recordingTerminal(), 2)).toEqual(['rate-limit:RATE_LIMITED']);
    expect(await lastOf({}, makeCall(), makeCtx({ checkAccess: () => ({ ok: false, reason: 'no' }) }))).toEqual(['access:PERMISSION_DENIED']);
    expect(await lastOf({}, makeCall(makeTool({ bindings: { owner: '${claims.missing}' } })))).toEqual(['bind-arguments:PERMISSION_DENIED']);
    const service = makeCall(makeTool({ name: 'remote', service: 'svc' }));
    expect(await lastOf({ 'circuit-breaker': { failureThreshold: 1 } }, service, makeCtx(), upstreamDown, 2)).toEqual(['circuit-breaker:CIRCUIT_OPEN']);
    const pastDeadline = { ...makeCtx(), deadline: Date.now() - 1 };
    expect(await lastOf({}, makeCall(), pastDeadline)).toEqual(['timeout:TIMEOUT']);
  });

  it('count a timeout that fires after the call was handed on as a pass only, like any result from inside', async () => {
    const metrics = recordingMetrics();
    const slow: Next = (call) => new Promise((resolve) => setTimeout(() => resolve(successResult(call, 'late')), 200));
    const chain = await build({ tenantPolicies: { timeout: { defaultMs: 5 } }, deps: { ...makeDeps(), metrics }, terminal: slow });
    const result = await chain(makeCall(), makeCtx());
    expect(result.error?.errorType).toBe('TIMEOUT');
    expect(metrics.decisions.filter((d) => d.startsWith('timeout:'))).toEqual(['timeout:pass']);
  });
});

describe('custom policy functions', () => {
  it('count an answer only when the policy never handed the call on, however late it decides', async () => {
    const metrics = recordingMetrics();
    const chain = await build({ tenantPolicies: { custom: [{ module: './late-policy.mjs', name: 'late', after: 'timeout' }] }, deps: { ...makeDeps(), metrics } });
    const late = () => metrics.decisions.filter((d) => d.startsWith('late:')).splice(0);
    const decided = async (name: string): Promise<string[]> => {
      metrics.decisions.length = 0;
      await chain(makeCall(makeTool({ name })), makeCtx());
      return late();
    };
    expect(await decided('plain')).toEqual(['late:pass']);
    expect(await decided('refused')).toEqual(['late:PERMISSION_DENIED']);
    expect(await decided('rewrite')).toEqual(['late:pass']);
  });
});
