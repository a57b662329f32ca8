import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtinPolicies } from '../../../policies/index.js';
import { compileBindingRules } from '../../../src/bindings/rules.js';
import { createPolicyChain, type PolicyChain } from '../../../src/pipeline/chain.js';
import { createCircuitRegistry } from '../../../src/pipeline/circuit-state.js';
import type { BuiltinPolicies, BuiltinPolicyFactory, PolicyDeps } from '../../../src/pipeline/types.js';
import type { BuiltinPolicyName } from '../../../src/pipeline/order.js';
import { makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

const baseDir = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** The built-ins, each counting the layers it was asked to make. */
function countingBuiltins(): { builtins: BuiltinPolicies; made: Map<BuiltinPolicyName, number> } {
  const made = new Map<BuiltinPolicyName, number>();
  const builtins = Object.fromEntries(
    Object.entries(builtinPolicies).map(([name, factory]) => [
      name,
      ((options, deps) => {
        made.set(name as BuiltinPolicyName, (made.get(name as BuiltinPolicyName) ?? 0) + 1);
        return factory(options, deps);
      }) satisfies BuiltinPolicyFactory,
    ]),
  ) as unknown as BuiltinPolicies;
  return { builtins, made };
}

const chainOf = (builtins: BuiltinPolicies, deps: PolicyDeps, tenantPolicies: Record<string, unknown>, extra: { bindings?: ReturnType<typeof compileBindingRules> } = {}): Promise<PolicyChain> =>
  createPolicyChain({ builtins, deps, baseDir, terminal: recordingTerminal(), tenantPolicies, bindingRules: extra.bindings });

describe('layers shared between tenants', () => {
  it('make a layer once per distinct options: tenants that differ in one limit share every other layer', async () => {
    const { builtins, made } = countingBuiltins();
    const deps = makeDeps({ circuits: createCircuitRegistry() });
    const policies = (limit: number) => ({ 'rate-limit': { limit, windowMs: 60_000 }, approval: { tools: ['tool_19'] }, retry: { attempts: 2 } });
    for (const limit of [100, 101, 102]) await chainOf(builtins, deps, policies(limit), { bindings: compileBindingRules({}) });
    expect(made.get('rate-limit')).toBe(3);
    for (const name of ['audit', 'access', 'bind-arguments', 'approval', 'max-depth', 'circuit-breaker', 'retry', 'timeout'] as const) expect(made.get(name), name).toBe(1);
  });

  it('still limits each tenant apart, with its own limit', async () => {
    const deps = makeDeps();
    const tool = makeTool({ name: 'search' });
    const one = await chainOf(builtinPolicies, deps, { 'rate-limit': { limit: 1, windowMs: 60_000 } });
    const two = await chainOf(builtinPolicies, deps, { 'rate-limit': { limit: 1, windowMs: 60_000 } });
    const call = (chain: PolicyChain, tenant: string) => chain(makeCall(tool), makeCtx({ principal: { tenant, user: 'u', roles: [], claims: {} } }));
    expect((await call(one, 'a')).ok).toBe(true);
    expect((await call(two, 'b')).ok).toBe(true);
    expect((await call(two, 'a')).error?.errorType).toBe('RATE_LIMITED');
  });

  it("make afresh what holds a tenant's own state: its binding rules, a circuit registry of the chain's own", async () => {
    const { builtins, made } = countingBuiltins();
    const deps = makeDeps();
    const own = compileBindingRules({ 'tool_*': { region: 'eu' } });
    for (let i = 0; i < 2; i += 1) await chainOf(builtins, deps, {}, { bindings: own });
    expect(made.get('bind-arguments')).toBe(2);
    expect(made.get('circuit-breaker')).toBe(2);
  });

  it('tell absent options from null ones, which the factory refuses every time', async () => {
    const deps = makeDeps();
    await chainOf(builtinPolicies, deps, {});
    await expect(chainOf(builtinPolicies, deps, { 'rate-limit': null })).rejects.toThrow(/policies\.rate-limit/);
    await expect(chainOf(builtinPolicies, deps, { 'rate-limit': null })).rejects.toThrow(/policies\.rate-limit/);
  });

  it('share no layer between deps of different processes (or tests)', async () => {
    const { builtins, made } = countingBuiltins();
    await chainOf(builtins, makeDeps(), {});
    await chainOf(builtins, makeDeps(), {});
    expect(made.get('access')).toBe(2);
  });
});

describe('binding rules of tenants that bind nothing', () => {
  it('are one set, whatever tenant compiles them', () => {
    expect(compileBindingRules({})).toBe(compileBindingRules({}));
    expect(compileBindingRules({ a: { b: 1 } })).not.toBe(compileBindingRules({ a: { b: 1 } }));
  });
});
